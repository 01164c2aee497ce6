#pragma once

#include "scalelab/core/collectives.h"
#include "scalelab/core/scenario.h"

#include <QHash>
#include <QList>
#include <QPointF>
#include <QString>
#include <array>
#include <cstdint>

// The Ring / ZeRO tab's figures, computed without widgets: the sweeps over the rank count, the
// parts one rank keeps, the traffic model's table and the figures line. The tab only draws them.

namespace scalelab::ui {

/// The stages in the order of the table's rows, the memory chart's lines and every array below.
inline constexpr std::array<core::ZeroStage, 4> kZeroStages = {
    core::ZeroStage::DataParallel, core::ZeroStage::Zero1, core::ZeroStage::Zero2,
    core::ZeroStage::Zero3};

/// Every byte figure of the tab is shown in decimal gigabytes; the axis titles say so.
inline constexpr double kZeroGB = 1e9;

/// The alpha-beta link the tab draws: the scenario's GB/s and microseconds in bytes per second
/// and seconds.
core::LinkModel zeroLink(const core::ZeroDisplay& display);
/// The accelerator's memory in bytes (the line on the memory charts).
std::int64_t zeroAcceleratorBytes(const core::ZeroDisplay& display);

/// The rank-axis end: 1024, or the next power of two above a larger rank count.
std::int64_t zeroRankAxisEnd(std::int64_t current);
/// The rank counts the sweeps are drawn at: every count up to 8, then steps of about 12%,
/// always including the current count and the axis end.
QList<std::int64_t> zeroSweptRanks(std::int64_t current);
/// Values per rank of the ring demo: two per chunk up to 8 ranks, one beyond.
int ringValuesPerRank(int ranks);

/// Bytes in GB, except the small figures of the chapter's exercises, written out in bytes
/// ("16,000 bytes" rather than "1.6e-05 GB").
QString zeroBytesText(double bytes);
/// "0 s", "12 µs", "3.4 ms", "1.2 s".
QString zeroSecondsText(double seconds);

/// The sweeps over the rank count, one point per zeroSweptRanks() count.
struct ZeroSweep {
    QList<std::int64_t> ranks;
    std::array<QList<QPointF>, 4> memory; ///< model state per rank (GB), by stage
    std::array<QList<QPointF>, 4> sent; ///< bytes one rank sends per step (GB), by stage
    QList<QPointF> algbw, busbw; ///< DP all-reduce bandwidths (GB/s), from two ranks on
};
ZeroSweep sweepZeroRanks(const core::ZeroInputs& in, const core::LinkModel& link);

/// What one rank keeps under one stage, in GB.
struct ZeroBreakdown {
    std::array<double, 3> replicated{}; ///< weights, gradients, optimizer: the whole copy
    std::array<double, 3> sharded{}; ///< weights, gradients, optimizer: this rank's 1/n
    double elsewhere = 0; ///< the shards the other ranks keep
    double length = 0; ///< the whole bar: this rank's state plus `elsewhere` (the DP figure)
};
ZeroBreakdown zeroBreakdown(const core::ZeroInputs& in, core::ZeroStage stage);

/// Where each stage starts to fit `capacityBytes`, for the stages that do at most at `axisEnd`
/// ranks: (ranks, GB per rank there).
QList<QPointF> zeroFitMarkers(const core::ZeroInputs& in, std::int64_t capacityBytes,
                              double axisEnd);

/// One row of the figures table: state per rank, fits?, sent, time, algbw / busbw.
using ZeroTableRow = std::array<QString, 5>;
ZeroTableRow zeroTableRow(const core::ZeroInputs& in, core::ZeroStage stage,
                          const core::StepTraffic& traffic, std::int64_t capacityBytes);
/// The title of the table's "fits" column, naming the accelerator.
QString zeroFitsHeader(std::int64_t capacityBytes);
/// The traffic of a stage: ZeRO-1 and ZeRO-2 send the same.
const core::StepTraffic& zeroStageTraffic(const core::ZeroTraffic& traffic, core::ZeroStage stage);

/// The figures line: the equations of each stage and of the ring with today's numbers.
QString zeroSummary(const core::ZeroInputs& in, const core::LinkModel& link,
                    const core::ZeroResult& result, const core::ZeroTraffic& traffic);

/// Everything the tab draws and writes for one scenario.
struct ZeroFigures {
    std::int64_t ranks = 0; ///< the current n
    double axisEnd = 0; ///< the rank axes' end
    double limit = 0; ///< the accelerator, GB
    ZeroSweep sweep;
    QList<QPointF> atCurrent; ///< each stage's state at the current n (GB)
    QList<QPointF> fits; ///< zeroFitMarkers()
    std::array<ZeroBreakdown, 4> breakdown; ///< by stage
    double twiceGradients = 0; ///< the ring's asymptote, 2 P g (GB)
    QString fitsHeader;
    std::array<ZeroTableRow, 4> table; ///< by stage
    QString summary;
};

/// Throws core::InputError for inputs core refuses (the zero.* keys first, then the link).
ZeroFigures computeZeroFigures(const core::ZeroInputs& in, const core::LinkModel& link,
                               std::int64_t capacityBytes);

/// The live values of the explanation's {{name}} placeholders.
QHash<QString, QString> zeroExplanationValues(const core::ZeroInputs& in);

} // namespace scalelab::ui
