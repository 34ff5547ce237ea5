# Run configurations shared by the MPI suite's scripts (mpi_checks.sh, multihost_checks.sh,
# slurm_checks.sh), which source this file.

# A small least-squares problem with full-batch gradients: every gradient is deterministic.
write_problem() {  # $1 = file, $2 = seed, $3 = max_steps, $4 = eval_every (default 0)
  cat >"$1" <<EOF
seed = $2
workers = 4
max_steps = $3
eval_every = ${4:-0}
save_model = true

[data]
source = "synthetic"
generator = "least_squares"
samples = 400
features = 20

[model]
name = "least_squares"

[training]
batch = 0
EOF
}

# run.toml: write_problem's problem (seed 1, $2 steps) with the [method] table's body $1, jobs
# paced to a fixed 0.1 s, and a worker declared lost after 2 s without an answer.
write_paced_run() {  # $1 = [method] body, $2 = max_steps
  write_problem run.toml 1 "$2"
  cat >>run.toml <<TOML
[method]
$1
[timing]
model = "fixed"
tau = 0.1
[engine]
inject = "pace"
worker_timeout_s = 2
TOML
}
