#include "pacer/experiment/plot.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "pacer/core/files.h"
#include "pacer/core/log.h"

namespace pacer {
namespace {

// gnuplot single-quoted string: a quote is written twice.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

}  // namespace

bool write_loss_plot(const std::string& dir, const std::string& name, const std::string& title,
                     const std::vector<PlotSeries>& series) {
  const std::string png = dir + "/" + name + ".png";
  const std::string png_temp = png + ".tmp";
  // The script runs inside `dir`, so it names its files relative to it.
  const std::string png_temp_name = name + ".png.tmp";
  std::string script = fmt::format(
      "# Drawn by pacer; re-run with: gnuplot {}.gp\n"
      "set terminal pngcairo size 1400,520 noenhanced\n"
      "set output {}\n"
      "set datafile separator ','\n"
      "set key below\n"
      "set grid\n"
      "set logscale y\n"
      "set multiplot layout 1,2 title {}\n",
      name, quoted(png_temp_name), quoted(title));
  // Rows are updates: column 1 is time, column 2 the step.
  auto plot_against = [&](const char* xlabel, int x_column) {
    script += fmt::format("set xlabel '{}'\nset ylabel 'training loss (reported)'\nplot ", xlabel);
    for (size_t i = 0; i < series.size(); ++i) {
      // Eight colours, then the same colours dashed.
      script += fmt::format("{}{} using {}:'loss' with lines lt {} dt {} title {}",
                            i ? ", \\\n     " : "", quoted(series[i].log_path), x_column, i % 8 + 1,
                            i / 8 + 1, quoted(series[i].label));
    }
    script += "\n";
  };
  script += "set datafile columnheaders\n";
  plot_against("time (s)", 1);
  plot_against("step (updates)", 2);
  script += "unset multiplot\nset output\n";

  write_file_atomic(dir + "/" + name + ".gp", script);
  if (!gnuplot_available()) {
    log_warning("gnuplot not found: wrote {}/{}.gp but no PNG (apt-get install gnuplot-nox)", dir,
                name);
    return false;
  }
  const std::string command = fmt::format("cd {} && gnuplot {} >/dev/null 2>&1", shell_quoted(dir),
                                          shell_quoted(name + ".gp"));
  if (std::system(command.c_str()) != 0 || !std::filesystem::exists(png_temp)) {
    log_warning("gnuplot could not draw {}/{}.gp; the script is kept", dir, name);
    std::remove(png_temp.c_str());
    return false;
  }
  std::filesystem::rename(png_temp, png);
  return true;
}

}  // namespace pacer
