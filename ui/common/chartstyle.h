#pragma once

#include <QColor>
#include <QFont>
#include <array>

QT_BEGIN_NAMESPACE
class QPainter;
class QChart;
class QAbstractAxis;
class QGraphicsSimpleTextItem;
class QLogValueAxis;
class QValueAxis;
QT_END_NAMESPACE

namespace scalelab::ui {

/// The Okabe-Ito palette: eight colours that stay distinct for the common kinds of colour
/// blindness, so no chart relies on red against green.
namespace palette {
inline const QColor kBlack{0, 0, 0};
inline const QColor kOrange{230, 159, 0};
inline const QColor kSkyBlue{86, 180, 233};
inline const QColor kGreen{0, 158, 115};
inline const QColor kYellow{240, 228, 66};
inline const QColor kBlue{0, 114, 178};
inline const QColor kVermillion{213, 94, 0};
inline const QColor kPurple{204, 121, 167};
/// In the order series take them.
inline const std::array<QColor, 7> kSeries = {kBlue,   kOrange,  kGreen, kVermillion,
                                              kPurple, kSkyBlue, kYellow};
} // namespace palette

/// Fonts of a chart, derived from the application font so a larger application font (projector
/// mode) enlarges every chart.
struct ChartFonts {
    QFont title;
    QFont axisTitle;
    QFont axisLabels;
    QFont legend;
    QFont annotation;
};
ChartFonts chartFonts();

/// What charts are drawn on: the system's palette (light or dark), white paper, or nothing
/// (transparent exports for slides with their own background). Applies to screen and export.
enum class ChartBackground { System, White, Transparent };
ChartBackground chartBackground();
void setChartBackground(ChartBackground background);
/// The colours every chart and painter uses for its background and its text and lines.
QColor chartBackgroundColor();
QColor chartTextColor();
/// Grid lines: a quiet step from the background towards the text.
QColor chartGridColor();

/// Gives a chart ScaleLab's look: white background, readable fonts, legend below, thin margins.
void styleChart(QChart* chart);
/// Fonts and grid of one axis; `title` includes the unit, e.g. "Memory (GB)".
/// `shortTitle`, whole words with the unit, is what an axis up the side shows where the whole
/// title does not fit in its room (fitChartTexts); empty: the whole title wraps.
void styleAxis(QAbstractAxis* axis, const QString& title, const QString& shortTitle = {});
/// Draws `axis`'s labels in no colour, now and at every restyle, so that they only hold their
/// room: a tab that draws its own names there (the FP8 grid chart's rows, whose scales change
/// at every step: a new label lays the whole chart out again, a scene item of its own does not).
void hideAxisLabels(QAbstractAxis* axis);
/// An axis's whole title: what the tab set, though fitChartTexts may show it wrapped.
QString axisTitle(const QAbstractAxis* axis);
/// Sets an axis's title, only when it is not already the whole title (a change lays the chart
/// out again).
void setAxisTitle(QAbstractAxis* axis, const QString& title);
/// A note in a chart's scene ("n = 64", "Yours: 8") in bold `font` and the text colour;
/// touches the item only when either differs (a note, unlike a title or legend name, never
/// lays the chart out again).
void styleNote(QGraphicsSimpleTextItem* note, QFont font);

/// Ticks from `anchor` every `step` on a value axis from `low` to `high`, labelled with the
/// decimals the step needs. What is already so is left alone: Qt Charts lays the whole chart out
/// again on a new range, interval or label format, even one equal to the last.
void setTicks(QValueAxis* axis, double anchor, double step, double low, double high);
/// Gives a value axis a range from `min` to a rounded-up `max` with ticks at round steps (1, 2,
/// 2.5 or 5 times a power of ten, about five to eight of them) labelled with just enough
/// decimals. `whole` keeps steps whole (for counts such as segments).
void setNiceRange(QValueAxis* axis, double min, double max, bool whole = false);
/// Ticks as setNiceRange gives them between `min` and `max`, on an axis that runs exactly from
/// min - pad to max + pad: bars centred on whole positions (pad 0.5) show whole at both ends.
/// Kept when the chart thins its ticks on a resize, like setNiceRange's range.
void setPaddedRange(QValueAxis* axis, double min, double max, double pad, bool whole = true);
/// setNiceRange for data that follow a slider: the axis keeps its range while the data from
/// `min` to `max` fit in it and span at least `keep` of the data the range was made for. A
/// slider dragged back and forth then moves the bars and curves against a still scale (the
/// change is what a student should see), and the chart is not laid out again on every step. A
/// step that halves the data (a log slider's step) keeps the scale, whatever the rounding up of
/// the range. Only a larger or much smaller span, or a new `min`, gives a new nice range.
void setStickyRange(QValueAxis* axis, double min, double max, bool whole = false,
                    double keep = 0.45);

/// A log axis over [lo, hi] widened to whole decades, a tick each, or one every other decade
/// when the plot is too short for a label each: Qt cuts a label that does not fit between its
/// ticks down to "...". Looked at again whenever the plot changes size.
void setLogDecades(QLogValueAxis* axis, double lo, double hi);

/// `text` broken at spaces into lines of at most `width` pixels in `font`, joined by <br> (Qt
/// Charts shows its texts as rich text). A word longer than the width keeps a line of its own;
/// rich text (a text with a tag) is left as it is.
QString wrapWords(const QString& text, const QFont& font, double width);
/// Fits the chart's title, legend entries and axis titles to its present size by wrapping them
/// onto more lines, where Qt Charts would cut them short ("Checkpointed a..."). Done on every
/// resize of a styled chart, after every refresh of a tab and before every export.
void fitChartTexts(QChart* chart);

/// Line width in pixels for data lines (3 px or more reads on a projector).
inline constexpr int kLineWidth = 3;

/// How much thicker lines are drawn (projector mode: 1.7).
double lineScale();
void setLineScale(double scale);
/// Whether `painter` writes a vector file (SVG or PDF) rather than pixels: shapes drawn once
/// and copied, or patterns of pixels, are then drawn as real shapes.
bool paintsVectors(const QPainter& painter);

/// Re-applies fonts (from the current application font) and line widths (times lineScale())
/// to a chart made earlier: its title, legend, every axis and every line series.
void restyleChart(QChart* chart);

} // namespace scalelab::ui
