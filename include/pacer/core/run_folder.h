// The output folder of one run, replaced as a whole (DESIGN.md section 6; docs/decisions.md,
// "Output folders").
//
// create() starts a new run in `dir`. The run's first files (config.toml, log.csv's header,
// summary.json with "status": "running") are written into a staging folder beside it,
// "<dir>.pacer-new.<pid>", which then takes the place of an earlier run's folder in one atomic
// step: Linux renameat2(RENAME_EXCHANGE) swaps the two names, and the earlier run, now under the
// staging name, is renamed to "<dir>.pacer-old.<pid>" and removed. So at every moment `dir` holds
// either the complete earlier run or the new one, never a mix, and a failure before the swap (a
// full disk) leaves the earlier run untouched and removes the staging folder. On a filesystem
// that refuses RENAME_EXCHANGE (EINVAL, ENOSYS, EOPNOTSUPP) the swap is two renames, `dir` to
// "<dir>.pacer-old.<pid>" then the staging folder to `dir`; between them `dir` is missing, and a
// crash there is repaired by the next create() or reopen(), which renames the earlier run back.
//
// After the swap every file of the folder is replaced atomically, one at a time (write()), and
// log.csv grows in whole rows (core/files.h AppendFile); reopen() continues a run in its existing
// folder without swapping (pacer run --resume).
//
// Orphans. create() and reopen() remove what killed processes left: sibling staging and old
// folders of `dir` whose pid is not running (a "<dir>.pacer-old.<pid>" is renamed back when `dir`
// is missing), and the "*.tmp.<pid>" files in `dir` (remove_stale_temp_files). Pids are checked
// on this host only: two runs into one folder at once, or from two hosts, are not supported.
//
// Safety. create() replaces only a folder that is empty or holds a summary.json (a pacer run's
// folder); any other existing path is refused with an Error, so that `--out ~` cannot remove a
// home folder. Everything in a replaced run folder goes with it, files added by hand included.
// A `dir` that is a symbolic link to a folder has that folder replaced; the link stays.
//
// Crash points (core/crash_point.h): "outputs.staged" (the staging folder is complete, nothing
// swapped), "outputs.aside" (the two-rename fallback only: `dir` renamed away, the new run not
// yet in place), "outputs.swapped" (the new run is in place, the earlier one not yet removed);
// every write() passes "outputs.temp_written" and "outputs.replaced" (core/files.h).
// PACER_TEST_NO_EXCHANGE=1 makes create() take the two-rename fallback (to test it).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer {

class RunFolder {
 public:
  // (file name relative to the folder, content), in the order they are written.
  using Files = std::vector<std::pair<std::string, std::string>>;

  // Starts a new run in `dir` (created with its parents when missing) holding `first_files`; see
  // the file comment. Throws Error naming the path on any failure, the earlier run then kept.
  static RunFolder create(const std::string& dir, const Files& first_files);
  // Continues the run in the existing folder `dir` (orphans removed). Throws Error when `dir` is
  // not a folder.
  static RunFolder reopen(const std::string& dir);

  // The folder's absolute path, symbolic links of its last component resolved: every file of the
  // run is under it.
  const std::string& dir() const { return dir_; }
  std::string path(std::string_view name) const { return dir_ + "/" + std::string(name); }
  // Replaces (or creates) the file `name` (which may name a subfolder: "figures/a.dat")
  // atomically. Throws Error naming it.
  void write(std::string_view name, std::string_view content) const;
  // Removes the file `name` if it exists. Throws Error naming it when it cannot.
  void remove(std::string_view name) const;

 private:
  explicit RunFolder(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace pacer
