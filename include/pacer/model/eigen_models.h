// Native models on Eigen (DESIGN.md section 1, `model`).
//
// Parameter layouts (flat vector x, row-major blocks in this order):
//   LeastSquares(d):          w (d).                    loss ½(a·w − y)²
//   Logistic(d):              w (d), b (1).             loss log(1 + e^{−s z}), z = a·w + b,
//                                                       s = ±1 from labels {0,1}
//   Softmax(d, K):            W (K×d), b (K).           cross-entropy of softmax(W a + b)
//   Mlp(d, h, K):             W1 (h×d), b1 (h), W2 (K×h), b2 (K); ReLU hidden layer;
//                             cross-entropy of softmax(W2 relu(W1 a + b1) + b2)
// Each adds (l2/2)·‖x‖² (biases included) when l2 > 0.
#pragma once

#include <memory>

#include "pacer/model/model.h"

namespace pacer {

std::unique_ptr<Model> make_least_squares_model(int features, double l2);
std::unique_ptr<Model> make_logistic_model(int features, double l2);
std::unique_ptr<Model> make_softmax_model(int features, int classes, double l2);
std::unique_ptr<Model> make_mlp_model(int features, int hidden, int classes, double l2);

}  // namespace pacer
