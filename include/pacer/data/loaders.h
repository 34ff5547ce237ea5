// Readers for the data formats pacer accepts.
//
// Every reader validates what it reads: a missing file, a wrong magic number, a header that
// disagrees with the file size, a truncated or corrupt file, or a bad line is reported as a
// pacer::Error naming the file (and the line, for text formats) and what was expected. Readers
// never crash or return partial data on bad input.
//
// Every reader reads through zlib, so any of these files may also be gzip-compressed; that is
// detected from the content, not the name.
//
// Feature values are returned as stored (pixels 0..255); normalisation is a separate step
// (normalize.h) so that test data can be scaled with training statistics.
//
// Memory: every reader estimates what it will hold (from a header, the file sizes, or the rows
// and the largest LIBSVM index once the text is parsed) before allocating the dense matrix, and
// refuses above `limit` (core/memory.h) with an Error naming the file and both sizes.
#pragma once

#include <string>

#include "pacer/core/memory.h"
#include "pacer/data/dataset.h"

namespace pacer {

// IDX (MNIST, Fashion-MNIST): an images file (magic 0x00000803, n x rows x cols unsigned bytes)
// and a labels file (magic 0x00000801). Either may be gzip-compressed (".gz"), detected from the
// content, not the name. The two counts must agree. num_classes = 1 + largest label.
Dataset load_idx(const std::string& images_path, const std::string& labels_path,
                 const MemoryLimit& limit = MemoryLimit::system_default());

// CIFAR-10 binary batches: records of 1 label byte + 3072 pixel bytes (3x32x32, channel-major).
// The file size must be a positive multiple of 3073. num_classes = 10.
Dataset load_cifar10(const std::vector<std::string>& batch_paths,
                     const MemoryLimit& limit = MemoryLimit::system_default());

// LIBSVM text: "label index:value index:value ..." with 1-based increasing indices.
// `num_features` = 0 infers the width from the largest index. Labels: if every label is an
// integer, they are mapped to classes 0..K-1 in increasing order (so {-1,+1} becomes {0,1});
// otherwise the data set is a regression set (num_classes = 0).
Dataset load_libsvm(const std::string& path, int num_features = 0,
                    const MemoryLimit& limit = MemoryLimit::system_default());

// CSV with numeric fields; `label_column` (0-based, negative counts from the end, default last)
// holds the label; a first line that does not parse as numbers is taken as a header. Labels are
// mapped as for LIBSVM.
Dataset load_csv(const std::string& path, int label_column = -1,
                 const MemoryLimit& limit = MemoryLimit::system_default());

// NumPy: features in an .npy file and labels in another (`labels_path`), or, when `labels_path`
// is empty, both in one .npz archive as arrays X and y (np.savez or np.savez_compressed); the
// kind (.npy or .npz) is detected from the content. Features have shape (rows, features), or
// (rows, d1, d2, ...) flattened in C order; labels shape (rows,). Element types: float64,
// float32, signed and unsigned integers of 1 to 8 bytes, bool, either byte order; C order only
// (a Fortran-ordered array is an Error); .npy format versions 1.0, 2.0 and 3.0. A plain .npy file
// is memory-mapped and converted to doubles without another copy. Labels are mapped as for
// LIBSVM; every value must be finite. Errors name the file, and the dtype or shape expected and
// found.
Dataset load_numpy(const std::string& path, const std::string& labels_path = "",
                   const MemoryLimit& limit = MemoryLimit::system_default());

// A one-paragraph human description of a data file (format, samples, features, classes, label
// histogram, value range), as printed by `pacer data info FILE`. The format is detected from the
// content: IDX (images or labels), CIFAR-10 binary, NumPy .npy (one array) or .npz (arrays X and
// y), LIBSVM, CSV.
std::string describe_data_file(const std::string& path);

}  // namespace pacer
