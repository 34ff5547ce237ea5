// The regime map of a sweep (plot.h: write_regime_map).
#include <fmt/format.h>

#include <set>

#include "figure_script.h"
#include "pacer/report/figure_palette.h"

namespace pacer {
namespace {

using figure::DataFile;
using figure::gp_string;
using figure::num;

// Tic labels at 0, 1, ...: ("a" 0, "b" 1).
std::string category_tics(const std::vector<std::string>& values) {
  std::vector<std::string> tics;
  for (size_t i = 0; i < values.size(); ++i) {
    tics.push_back(fmt::format("{} {}", gp_string(values[i]), i));
  }
  return fmt::format("({})", fmt::join(tics, ", "));
}

// A tile's fill: the method's colour, solid for the first spec of its colour; lighter and hatched
// (sparsely, under the tile's text) for the others, which the line figures tell apart by
// dashes, which a tile has not. Hatches 6 and 7 are gnuplot's sparse diagonals, 1 and 2 its
// crosses.
std::vector<std::string> tile_fills(const figure::MethodStyle& style) {
  if (style.variant == 0) return {"fs solid 0.45"};
  constexpr int kHatches[] = {6, 7, 1, 2};
  return {"fs solid 0.2", fmt::format("fs transparent pattern {}",
                                      kHatches[(style.variant - 1) % std::size(kHatches)])};
}

// A cell without a winner (undecided, or no method reached the target) is grey.
constexpr const char* kNoWinnerColour = "#BBBBBB";

std::string tile_colour(const std::vector<figure::MethodStyle>& styles, int w) {
  return w < 0 ? kNoWinnerColour : styles[static_cast<size_t>(w)].colour;
}

std::string tile_name(const RegimeMap& map, int w) {
  return w < 0 ? "no winner (undecided)" : map.methods[static_cast<size_t>(w)];
}

}  // namespace

std::optional<Figure> write_regime_map(const std::string& dir, const RegimeMap& map) {
  const size_t nx = std::max<size_t>(1, map.x_values.size()), ny = map.y_values.size();
  if (ny == 0 || map.winner.size() != nx * ny || map.labels.size() != nx * ny) return std::nullopt;
  const std::vector<figure::MethodStyle> styles = figure::method_styles(map.methods);
  DataFile data(fmt::format(
      "{}\nOne row per cell: column (x), row (y), the winning method's colour as 0xRRGGBB, its "
      "index, its name.",
      map.title));
  std::set<int> winners;
  for (size_t y = 0; y < ny; ++y) {
    for (size_t x = 0; x < nx; ++x) {
      const int w = map.winner[y * nx + x];
      winners.insert(w);
      data.raw(fmt::format("{} {} {} {} {}", x, y, figure::colour_value(tile_colour(styles, w)), w,
                           figure::data_string(tile_name(map, w))));
    }
  }
  std::vector<std::string> legend;
  for (int w : winners) legend.push_back(tile_name(map, w));
  const int tile_w = 230, tile_h = 120;
  const int width = 200 + tile_w * static_cast<int>(nx) +
                    static_cast<int>(figure::longest(legend) * figure::kCharPixels) + 80;
  const int height = 170 + tile_h * static_cast<int>(ny);
  figure::Script s("regime_map", map.caption, width, height);
  const double left = 170.0 / width, right = (170.0 + tile_w * nx) / width;
  s << fmt::format(
      "set lmargin at screen {}\nset rmargin at screen {}\nset bmargin at screen {}\n"
      "set tmargin at screen {}",
      num(left), num(right), num(90.0 / height), num(1 - 60.0 / height));
  s << fmt::format("set title {}", gp_string(map.title));
  s << fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]", num(nx - 0.5), num(ny - 0.5));
  s << (map.x_values.empty()
            ? std::string("unset xtics")
            : fmt::format("set xtics {} nomirror scale 0", category_tics(map.x_values)));
  s << fmt::format("set ytics {} nomirror scale 0", category_tics(map.y_values));
  s << fmt::format("set xlabel {}\nset ylabel {}", gp_string(map.x_key), gp_string(map.y_key));
  s << fmt::format("set key at screen {}, screen {} left top Left reverse noautotitle",
                   num((190.0 + tile_w * nx) / width), num(1 - 60.0 / height));
  for (size_t y = 0; y < ny; ++y) {
    for (size_t x = 0; x < nx; ++x) {
      s << fmt::format("set label {} {} at {}, {} center front", y * nx + x + 1,
                       figure::gp_lines(map.labels[y * nx + x]), x, y);
    }
  }
  std::vector<std::string> clauses;
  for (int w : winners) {
    const std::vector<std::string> fills =
        w < 0 ? std::vector<std::string>{"fs solid 0.45"} : tile_fills(styles[w]);
    for (size_t f = 0; f < fills.size(); ++f) {
      const bool last = f + 1 == fills.size();
      clauses.push_back(fmt::format(
          "'figures/regime_map.dat' using 1:($4 == {} ? $2 : NaN):(0.5):(0.5) with boxxyerror {} "
          "{} fc rgb '{}' {}",
          w, fills[f], f == 0 ? "border lc rgb 'white'" : "noborder", tile_colour(styles, w),
          last ? "title " + gp_string(tile_name(map, w)) : std::string("notitle")));
    }
  }
  s.plot(clauses);
  return figure::render_now(dir, s, {{"figures/regime_map.dat", &data}}, map.caption);
}

}  // namespace pacer
