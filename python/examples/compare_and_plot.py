"""DGD against PGC-CR on Fashion-MNIST from Python, with a figure drawn from the returned frames.

From the repository root, after the README's commands (docs/python.md):

    PYTHONPATH=build/python /usr/bin/python3 python/examples/compare_and_plot.py [OUT]

It runs the comparison of the README's main job on 3000 training images with two seeds (about
20 s), prints the table, and, when matplotlib is installed (Debian: python3-matplotlib), draws
OUT/python-example.png: each method's reported loss against simulated time (first seed, smoothed)
and its mean time to the target with the 95 % interval over the seeds. OUT defaults to
runs/python-example.
"""

import pathlib
import sys

import pacer


def draw(result: pacer.CompareResult, path: pathlib.Path) -> None:
    import matplotlib
    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    table = result.table.set_index("method")
    fig, (loss, time) = plt.subplots(1, 2, figsize=(11, 4))
    for method in table.index:
        run = result.run(method)  # its first seed: log.csv, evals.csv, summary.json
        smoothed = run.log["loss"].rolling(20, min_periods=1).mean()
        loss.plot(run.log["time"], smoothed, label=method, linewidth=1)
    target = result.run(table.index[0]).summary["targets"][0]["loss"]
    loss.axhline(target, color="grey", linestyle="--", linewidth=0.8, label=f"target {target}")
    loss.set(xlabel="simulated time (s)", ylabel="reported loss (mean of 20 updates)",
             yscale="log")
    loss.legend()
    mean = table["time_to_target_mean"]
    errors = [mean - table["time_to_target_low"], table["time_to_target_high"] - mean]
    time.bar(table.index, mean, yerr=errors, capsize=4, color="tab:blue")
    time.set(ylabel="time to target (s), 95 % interval", title=f"{int(table['runs'].iloc[0])} seeds")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "runs/python-example")
    result = pacer.compare("configs/fashion-mnist.toml", methods=["dgd", "pgc-cr"], seeds=2,
                           set={"data.max_train": 3000}, out=out)
    print(result.markdown)
    columns = ["reached", "time_to_target_mean", "time_to_target_low", "time_to_target_high",
               "step_time_mean", "test_accuracy_mean"]
    print(result.table.set_index("method")[columns].to_string())
    try:
        import matplotlib  # noqa: F401  (only to know whether it is there)
    except ImportError:
        print("\nmatplotlib is not installed (Debian: apt-get install python3-matplotlib): "
              "no figure drawn; pacer's own figures are in " + str(result.out))
        return
    draw(result, out / "python-example.png")
    print(f"\nfigure: {out / 'python-example.png'}")


if __name__ == "__main__":
    main()
