// The palette of the figures that show methods side by side (plot.h): a method's colour says its
// family and which method of the family it is, its dash pattern which spec of that method.
//
// The families group the registry's methods (method/registry.h) by how they work, each family a
// hue and each method a shade of it:
//   synchronous baselines        dgd, is-sgd (browns)
//   gradient coding              gc-fr, gc-cr, is-gc-fr, is-gc-cr (blues)
//   pipelined gradient coding    pgc-fr, pgc-cr (orange, vermillion)
//   asynchronous SGD             asgd, rescaled-asgd, delay-adaptive-asgd, ringmaster (greens)
//   round-based asynchronous     rennala, malenia, ringleader (purples)
// A colour per registry method rather than per family: the gradient-coding family alone has 12
// specs in `pacer advise`'s 29 (four methods, s = 1, 2, 3), more than dash patterns can tell
// apart; with a shade per method a spec's dash only has to tell its s (or k) values apart.
// A method the table does not know gets a shade of a sixth, grey-olive family.
#pragma once

#include <string>
#include <vector>

namespace pacer::figure {

// How one method of a figure is drawn.
struct MethodStyle {
  std::string colour;  // "#RRGGBB"
  std::string dash;    // a gnuplot dash type: "1" (solid) or a pattern "(9,4)"
  // 0 for the first spec of the list with this colour, 1 for the next, ...: which dash it has
  // (dash_pattern), and which fill a tile of it has where dashes cannot show.
  int variant = 0;
  std::string family;  // "gradient coding", ...; "other methods" for a method the table lacks
};

// The registry method of a spec: the text before the first ':' ("pgc-cr:s=2" -> "pgc-cr").
std::string method_of_spec(const std::string& spec);

// The styles of the methods of one figure (or of the figures of one comparison), in the order
// of `specs`. The colour depends only on the spec's registry method; the variant counts the
// earlier specs of the list with the same colour, so that every spec of the list has a distinct
// (colour, dash) pair however many there are. The same list gives the same styles.
std::vector<MethodStyle> method_styles(const std::vector<std::string>& specs);

// The gnuplot dash type of variant k: "1" (solid) for 0, then dashed, dotted, dash-dotted, long
// dashed, ...; distinct for every k >= 0.
std::string dash_pattern(int variant);

// The registry methods the palette's table names, in its order (tests hold it against the
// registry).
std::vector<std::string> palette_methods();

}  // namespace pacer::figure
