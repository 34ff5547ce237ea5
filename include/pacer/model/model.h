// The Model interface: loss and gradient at a flat parameter vector.
//
// A Model is stateless with respect to training: all parameters live in the flat vector x the
// caller passes, and all scratch memory lives in a Workspace the caller owns (one per worker), so
// one Model object can be shared by every worker of a simulation and the hot path performs no
// heap allocation once the workspace exists.
//
// Losses are means over the rows of a Batch, plus (l2/2)·‖x‖² when the model has an L2 term; the
// gradient is the gradient of exactly that quantity.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pacer/core/rng.h"
#include "pacer/core/vector.h"
#include "pacer/data/dataset.h"

namespace pacer {

// Scratch memory of one Model for batches of up to max_rows() rows. Opaque to callers.
class Workspace {
 public:
  virtual ~Workspace() = default;
  virtual int max_rows() const = 0;
};

// The precision in which a model reads its parameters (Model::parameter_precision).
enum class Precision { kFloat64, kFloat32 };

struct Evaluation {
  double loss = 0;      // mean loss over the rows, plus the L2 term
  double accuracy = 0;  // fraction of rows whose arg-max prediction equals the label; NaN for
                        // regression models
};

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string name() const = 0;
  // Length of the flat parameter vector.
  virtual int64_t num_params() const = 0;
  // Writes initial parameters into x (resized to num_params()), drawing only from rng.
  virtual void initialize(Vec& x, Rng& rng) const = 0;
  // kFloat32 when loss, loss_and_gradient, evaluate and predict depend on x only through its
  // entries rounded to float (static_cast<float>(x[i])): a caller may then round x to float before
  // passing it without changing any result (the MPI engine sends such a model in float32, half the
  // bytes). kFloat64 otherwise, the default.
  virtual Precision parameter_precision() const { return Precision::kFloat64; }
  // Scratch for batches of up to max_rows rows.
  virtual std::unique_ptr<Workspace> make_workspace(int max_rows) const = 0;
  // Bytes the matrices of make_workspace(max_rows) hold, without allocating them: runs whose
  // workspaces cannot fit in memory are refused before they start (core/memory.h). Fixed-size
  // buffers may be left out; 0 when a model does not say.
  virtual double workspace_bytes(int max_rows) const {
    (void)max_rows;
    return 0;
  }

  // Mean loss over batch at x (plus the L2 term). Requires batch.rows <= ws.max_rows().
  virtual double loss(const Vec& x, const Batch& batch, Workspace& ws) const = 0;
  // Same loss, and its gradient written into grad (which must have num_params() entries;
  // it is overwritten, not accumulated into). No heap allocation.
  virtual double loss_and_gradient(const Vec& x, const Batch& batch, Vec& grad,
                                   Workspace& ws) const = 0;
  // Loss and accuracy over a whole data set of any size (processed in chunks of
  // ws.max_rows() rows).
  virtual Evaluation evaluate(const Vec& x, const Dataset& data, Workspace& ws) const;

 protected:
  // Per-row predictions for accuracy: class index of each row of batch (classification models
  // only). Models that are not classifiers return false.
  virtual bool predict(const Vec& x, const Batch& batch, Workspace& ws, int* out) const;
};

}  // namespace pacer
