// The MPI runtime's process layer (DESIGN.md section 5): starting and ending MPI, the signal flag,
// and the session protocol between rank 0 and the worker ranks.
//
// A pacer MPI job is one *session*: rank 0 runs the user's command (`pacer run`, `pacer compare`)
// and every other rank serves it. For each run rank 0 sends the resolved configuration to ranks
// 1..n (begin_run); each worker rank builds the same problem and method from it and reports
// whether that worked; rank 0 answers go or abort; on go the run's jobs flow (mpi_cluster.h) until
// rank 0 stops them; then the worker ranks wait for the next command. At the end rank 0 tells
// every rank to exit, with the exit status it chose (end_session).
//
// Errors. Everything that goes wrong on a worker rank during a run (a method or data error, a
// failed setup) is sent to rank 0, which reports it in one message naming the rank; the worker
// ranks then exit with the status rank 0 chose, printing nothing. Only failures that make rank 0
// unreachable (a timeout, a broken communicator) are printed by the worker rank itself, which then
// calls MPI_Abort(MPI_COMM_WORLD, 1). All MPI calls return errors (MPI_ERRORS_RETURN) and are
// turned into pacer::Error naming the call, the rank and the message tag.
//
// Interrupts. init() installs SIGINT and SIGTERM handlers that only set the process-wide flag of
// core/interrupt.h (mpirun forwards Ctrl-C to every rank as SIGTERM, then sends SIGKILL about one
// second later). Rank 0's poll loop reads the flag and ends the run as "interrupted" (exit status
// 130 for SIGINT, 143 for SIGTERM). A worker rank that receives
// the signal on its own (kill -TERM of that one process) stops: it reports the signal to rank 0
// (serve_jobs, or its next setup report), which ends the run with an error naming that rank
// (status "error", exit status 1); when rank 0 was interrupted too (Ctrl-C), the run ends
// "interrupted" as before.
//
// Start-up. start() bounds MPI_Init and a first handshake with every rank by
// engine.startup_timeout_s, so that a rank that is stopped or never starts ends the job with one
// error instead of hanging it inside MPI_Init.
//
// Lost ranks. Rank 0's engine declares a worker lost when it misses engine.worker_timeout_s
// (mpi_cluster.h) and records it here (set_rank_lost), because the session outlives the run: a
// later run cannot start without that rank (begin_run refuses it), end_session does not wait for
// it, and the exit command tells every rank that one was lost, so that finalize() is bounded in
// time. Open MPI 4.1 keeps a job alive when a rank dies only under `mpirun --enable-recovery`
// (launched_with_recovery), or when the rank's launched process ends normally although pacer in
// it died (`pacer mpi-rank` with orte_allowed_exit_without_sync: supervised_with_exit_allowed);
// otherwise mpirun ends every rank about one second after the death.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/engine/cluster/transport.h"

namespace pacer::mpi {

// An error another rank reports. A process that catches it exits non-zero without printing.
class PeerError : public Error {
 public:
  using Error::Error;
};

// Starts MPI if it is not running yet (MPI_Init_thread, funneled), sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD and installs the interrupt handlers. Idempotent. Throws Error when MPI cannot
// start or has already been finalized.
void init();
// init() bounded in time, for the pacer program (the timeout is engine.startup_timeout_s; 0 = no
// bound, then it is init()). If MPI_Init has not returned within timeout_s on rank 0 (2·timeout_s
// plus 0.2 s per rank on worker ranks, so that rank 0 reports first), this process prints one
// error and exits with status 1 (MPI cannot be aborted before it has started; mpirun then ends the
// other ranks). Then every worker rank sends rank 0 a hello and waits for its answer: a rank that
// does not answer within timeout_s (rank 0 waiting for the workers) or 2·timeout_s (a worker
// waiting for rank 0) is named in one error, and the job is aborted (abort_job(1)).
void start(double timeout_s, int poll_sleep_us = 200);
// engine.startup_timeout_s by default: MPI_Init and the handshake take well under a second on one
// host and seconds on a cluster; a minute leaves room for a slow batch-system start.
inline constexpr double kDefaultStartupTimeoutS = 60;
// Whether init() has started MPI in this process (and finalize() has not ended it).
bool active();
int rank();  // requires active()
int size();  // requires active()
// Ends MPI (MPI_Finalize) if active(). Idempotent. After a session that ended with a rank lost
// (end_session on rank 0, the exit command on the others) under survives_dead_worker(),
// MPI_Finalize sometimes never returns (Open MPI 4.1.4, shared memory and TCP: every surviving
// rank waits inside ompi_mpi_finalize, docs/mpi.md): it is given kLostFinalizeTimeoutS (it takes
// well under 0.1 s otherwise), and if it has not returned by then the process flushes stdout and
// stderr and ends with the session's exit status (_Exit) instead of returning. Under
// --enable-recovery mpirun does not take a rank that ends without MPI_Finalize for a failure
// (measured with Open MPI 4.1.4: it then exits 0 whatever its ranks return).
void finalize();
inline constexpr double kLostFinalizeTimeoutS = 3;
// Ends the whole job at once: MPI_Abort(MPI_COMM_WORLD, code). For failures after which the
// ranks can no longer agree on a clean end. Under --enable-recovery Open MPI 4.1 ends only the
// calling rank (measured); the others notice a dead rank 0 (rank_known_dead) or a lost worker.
[[noreturn]] void abort_job(int code);

// True once SIGINT or SIGTERM has reached this process (after init(), or after the pacer program
// installed the handlers: core/interrupt.h, whose flag this reads).
bool interrupt_requested();
// "SIGINT" or "SIGTERM" once interrupt_requested(), "" before.
const char* interrupt_signal_name();

// Whether Open MPI's launcher was told to keep the job alive when a rank dies (`mpirun
// --enable-recovery`, or `--mca orte_enable_recovery 1`): orterun passes the setting to every
// rank as OMPI_MCA_orte_enable_recovery (measured with Open MPI 4.1.4: "1" with the option, absent
// without it or with --disable-recovery). A value set only in an MCA parameter file is not
// seen. False under other launchers.
bool launched_with_recovery();

// The environment variable `pacer mpi-rank` (tools/pacer/rank_supervisor.cc) sets, to "1", in the
// pacer process it starts as its child.
inline constexpr const char* kRankSupervisedVariable = "PACER_RANK_SUPERVISED";
// Whether this process runs under `pacer mpi-rank` (kRankSupervisedVariable is "1"). Inline: it
// needs no MPI, and a pacer built without the MPI engine asks it too.
inline bool rank_supervised() {
  const char* supervised = std::getenv(kRankSupervisedVariable);
  return supervised != nullptr && std::string_view(supervised) == "1";
}
// Whether this process runs under `pacer mpi-rank` in a job whose launcher accepts a rank that
// ends without MPI_Finalize (`mpirun --mca orte_allowed_exit_without_sync 1`, passed to every rank
// as OMPI_MCA_orte_allowed_exit_without_sync): a dead worker process is then a rank that ended
// normally, and the job goes on, on every host (docs/mpi.md, "Across hosts").
bool supervised_with_exit_allowed();
// Whether a worker process's death leaves the job running: under `pacer mpi-rank`,
// supervised_with_exit_allowed() (with --enable-recovery alone a remote daemon never reports a
// supervised rank that ended without MPI_Finalize); otherwise launched_with_recovery(). The MCA
// settings are seen only on mpirun's command line or in the environment, not in a parameter file.
bool survives_dead_worker();
// The launcher that started this process, from its environment: "mpirun" (Open MPI's, which sets
// OMPI_MCA_orte_hnp_uri), "srun" (Slurm's direct launch: a PMIx namespace of Slurm's, without
// Open MPI's variables), or "an unknown launcher".
std::string launcher_name();
// What a job that does not survive_dead_worker() risks, for the launcher that started it, and
// how to launch it instead: mpirun with `pacer mpi-rank` (any number of hosts) or
// --enable-recovery (one host); under srun, mpirun inside the allocation, since Slurm's PMIx
// plugin cancels the whole job step when a rank's process dies (docs/mpi.md, "Slurm").
std::string dead_worker_warning();

// Rank 0: records that worker rank `rank` (1..size()-1) was declared lost (`lost` = true) or came
// back (false). A rank still lost when a run ends stays lost for the rest of the session.
void set_rank_lost(int rank, bool lost);
// The ranks recorded as lost, ascending.
std::vector<int> lost_ranks();
// True when rank `rank` certainly no longer runs: it runs on this host, in this pid namespace (as
// the start-up handshake said: rank 0 knows every worker rank, a worker rank knows rank 0), and
// its process is gone or a zombie. False when it runs or that cannot be told (another host; no
// handshake, as with init() alone). Nothing is sent to a dead rank (the send would never
// complete, and over TCP Open MPI would print a warning that the connection failed), and a wait
// for one is cut short: under --enable-recovery mpirun does not end the job when a rank dies, so
// a worker rank whose rank 0 has died ends the job itself (wait_command, report_setup,
// serve_jobs) instead of waiting for its timeouts.
bool rank_known_dead(int rank);
// How often a rank waiting for a peer checks rank_known_dead (cluster/transport.h).
using cluster::kLivenessCheckS;

// Seconds on a monotonic clock, and the back-off between two empty polls (cluster/transport.h).
using cluster::poll_sleep;
using cluster::wall_seconds;

// The explicit timeouts of the session protocol.
struct SessionOptions {
  double timeout_s = 1800;  // waiting for a worker rank's setup report; 0 = wait forever
  int poll_sleep_us = 100;
};

// Rank 0: starts one run on ranks 1..workers. Requires active(), rank() == 0. Checks that the job
// has exactly workers + 1 ranks (an Error saying how to launch it otherwise; the ranks are then
// told to exit by end_session), sends `config_toml` to every worker rank, waits for their setup
// reports and answers go if all succeeded. Throws Error naming the first failed rank and its
// message (after telling every worker rank to abort the run), or naming the ranks that did not
// report within the timeout. A rank that an earlier run of the session lost (lost_ranks()) makes
// it an Error naming that rank, before anything is sent.
void begin_run(const std::string& config_toml, int workers, const SessionOptions& options);

// Rank 0: tells every other rank to leave the session and exit with `exit_status`, and waits
// (at most 60 s each, else the job is aborted) until each rank not lost_ranks() has taken the
// command. A lost rank is sent it too (a rank declared lost may be alive, only slow, and it takes
// the command once its job ends) but not waited for; a rank_known_dead() is sent nothing.
// Requires active(), rank() == 0. Call once, after the last run.
void end_session(int exit_status);

// What a worker rank is told to do next.
struct Command {
  enum Kind { kRun, kExit } kind = kExit;
  std::string config_toml;  // kRun: the run's resolved configuration
  int exit_status = 0;      // kExit
  bool peers_lost = false;  // kExit: a rank of the job was lost (finalize() is bounded)
};

// Worker ranks: waits (polling, sleeping between polls) for rank 0's next command. Waits without a
// timeout: if rank 0 dies, mpirun ends the job, or (under --enable-recovery, which keeps the job)
// this rank does when it sees rank 0's process gone (rank_known_dead); a rank 0 on another host
// that dies then leaves the job waiting.
Command wait_command(int poll_sleep_us = 200);

// Worker ranks: reports the outcome of building the run (`error` empty = ready) and returns true
// when rank 0 says go, false when it aborts the run.
bool report_setup(const std::string& error, int poll_sleep_us = 200);

}  // namespace pacer::mpi
