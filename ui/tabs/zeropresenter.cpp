#include "zeropresenter.h"

#include "format.h"

#include <QCoreApplication>
#include <algorithm>
#include <cmath>

namespace scalelab::ui {

namespace {

using core::ZeroStage;

/// The texts keep the tab's translation context: they were the tab's own before.
struct Text {
    Q_DECLARE_TR_FUNCTIONS(scalelab::ui::ZeroTab)
};

QString formatBandwidth(double bytesPerSecond)
{
    return Text::tr("%1 GB/s").arg(formatNumber(bytesPerSecond / kZeroGB));
}

/// P g: the gradient tensor in bytes.
double gradientBytes(const core::ZeroInputs& in)
{
    return static_cast<double>(in.parameters) * static_cast<double>(in.gradBytes);
}

std::array<double, 4> stageFigures(const core::ZeroResult& r)
{
    return {r.dp.value(), r.zero1.value(), r.zero2.value(), r.zero3.value()};
}

QString ringSummary(const core::ZeroInputs& in, const core::LinkModel& link,
                    const core::ZeroTraffic& traffic)
{
    const std::int64_t n = in.ranks;
    if (n <= 1)
        return Text::tr("<b>Ring all-reduce</b>: one rank has nothing to send.");
    return Text::tr(
               "<b>Ring all-reduce</b> of the gradients S = Pg = %1: 2(n&minus;1)/n &middot; S "
               "= <b>%2</b> sent per rank; t = 2(n&minus;1)(&alpha; + S/(nB)) = %3 &times; (%4 "
               "+ %1 / (%5 &times; %6)) = <b>%7</b>; algbw = S/t = %8, busbw = algbw &times; "
               "2(n&minus;1)/n = <b>%9</b>")
        .arg(zeroBytesText(gradientBytes(in)), zeroBytesText(traffic.dp.bytes.value()),
             formatWhole(2 * (n - 1)), zeroSecondsText(link.latency), formatWhole(n),
             formatBandwidth(link.bandwidth), zeroSecondsText(traffic.dp.seconds),
             formatBandwidth(traffic.dp.algorithmBandwidth),
             formatBandwidth(traffic.dp.busBandwidth));
}

QString fitsText(const core::ZeroInputs& in, ZeroStage stage, double stateBytes,
                 std::int64_t capacityBytes)
{
    if (stateBytes <= static_cast<double>(capacityBytes))
        return Text::tr("yes");
    if (const auto from = core::fewestRanksThatFit(in, stage, capacityBytes))
        return Text::tr("no: needs %1 ranks").arg(formatWhole(*from));
    return Text::tr("no: never");
}

} // namespace

core::LinkModel zeroLink(const core::ZeroDisplay& display)
{
    return core::LinkModel{display.linkBandwidthGBps * 1e9, display.linkLatencyUs * 1e-6};
}

std::int64_t zeroAcceleratorBytes(const core::ZeroDisplay& display)
{
    return std::llround(display.acceleratorGb * kZeroGB);
}

std::int64_t zeroRankAxisEnd(std::int64_t current)
{
    std::int64_t end = 1024;
    while (end < current && end < (std::int64_t(1) << 53))
        end *= 2;
    return end;
}

QList<std::int64_t> zeroSweptRanks(std::int64_t current)
{
    const std::int64_t end = zeroRankAxisEnd(current);
    QList<std::int64_t> out;
    std::int64_t n = 1;
    while (n < end) {
        out << n;
        // Every count where the curves bend most, then about 12% apart: smooth enough on a log
        // axis, and few enough points to redraw four charts within a frame.
        n = n < 8 ? n + 1 : std::max(n + 1, static_cast<std::int64_t>(std::llround(n * 1.12)));
        if (out.back() < current && n > current && current < end)
            out << current;
    }
    if (out.back() != end)
        out << end;
    return out;
}

int ringValuesPerRank(int ranks)
{
    // Two values a chunk show that a chunk is a slice, not one number; past 8 ranks one value a
    // chunk keeps the buffers at 16 columns, still readable on a slide.
    return ranks <= 8 ? 2 * ranks : ranks;
}

QString zeroBytesText(double bytes)
{
    if (bytes < 1e6)
        return bytes == std::floor(bytes)
            ? Text::tr("%1 bytes").arg(formatWhole(static_cast<std::int64_t>(bytes)))
            : Text::tr("%1 bytes").arg(formatNumber(bytes, 6));
    return formatBytes(bytes, ByteUnit::GB);
}

QString zeroSecondsText(double seconds)
{
    if (seconds == 0)
        return Text::tr("0 s");
    if (seconds < 1e-3)
        return Text::tr("%1 µs").arg(formatNumber(seconds * 1e6));
    if (seconds < 1)
        return Text::tr("%1 ms").arg(formatNumber(seconds * 1e3));
    return Text::tr("%1 s").arg(formatNumber(seconds));
}

ZeroSweep sweepZeroRanks(const core::ZeroInputs& in, const core::LinkModel& link)
{
    ZeroSweep out;
    out.ranks = zeroSweptRanks(in.ranks);
    for (auto& list : out.memory)
        list.reserve(out.ranks.size());
    for (auto& list : out.sent)
        list.reserve(out.ranks.size());
    for (const std::int64_t k : std::as_const(out.ranks)) {
        core::ZeroInputs at = in;
        at.ranks = k;
        const auto x = static_cast<double>(k);
        const std::array<double, 4> memory = stageFigures(core::computeZeroUnchecked(at));
        const core::ZeroTraffic t = core::zeroTraffic(at, link);
        for (std::size_t i = 0; i < kZeroStages.size(); ++i) {
            out.memory[i] << QPointF(x, memory[i] / kZeroGB);
            out.sent[i] << QPointF(x, zeroStageTraffic(t, kZeroStages[i]).bytes.value() / kZeroGB);
        }
        if (k >= 2) { // one rank sends nothing: no bandwidth to speak of
            out.algbw << QPointF(x, t.dp.algorithmBandwidth / kZeroGB);
            out.busbw << QPointF(x, t.dp.busBandwidth / kZeroGB);
        }
    }
    return out;
}

ZeroBreakdown zeroBreakdown(const core::ZeroInputs& in, ZeroStage stage)
{
    const core::ZeroStageBytes b = core::zeroStageBytes(in, stage);
    const core::ZeroPart parts[] = {b.weights, b.gradients, b.optimizer};
    ZeroBreakdown out;
    for (std::size_t k = 0; k < 3; ++k) {
        out.replicated[k] = parts[k].replicated.value() / kZeroGB;
        out.sharded[k] = parts[k].sharded.value() / kZeroGB;
    }
    out.elsewhere = b.onOtherRanks.value() / kZeroGB;
    out.length = (b.total.value() + b.onOtherRanks.value()) / kZeroGB;
    return out;
}

QList<QPointF> zeroFitMarkers(const core::ZeroInputs& in, std::int64_t capacityBytes,
                              double axisEnd)
{
    QList<QPointF> fits;
    for (const ZeroStage stage : kZeroStages) {
        const auto from = core::fewestRanksThatFit(in, stage, capacityBytes);
        if (!from || static_cast<double>(*from) > axisEnd)
            continue;
        core::ZeroInputs at = in;
        at.ranks = *from;
        fits << QPointF(static_cast<double>(*from),
                        core::zeroStageBytes(at, stage).total.value() / kZeroGB);
    }
    return fits;
}

const core::StepTraffic& zeroStageTraffic(const core::ZeroTraffic& traffic, ZeroStage stage)
{
    switch (stage) {
    case ZeroStage::DataParallel:
        return traffic.dp;
    case ZeroStage::Zero1:
    case ZeroStage::Zero2:
        return traffic.zero12;
    case ZeroStage::Zero3:
        return traffic.zero3;
    }
    return traffic.dp;
}

ZeroTableRow zeroTableRow(const core::ZeroInputs& in, ZeroStage stage,
                          const core::StepTraffic& traffic, std::int64_t capacityBytes)
{
    const double state = core::zeroStageBytes(in, stage).total.value();
    const QString bandwidth = traffic.seconds > 0
        ? Text::tr("%1 / %2 GB/s")
              .arg(formatNumber(traffic.algorithmBandwidth / kZeroGB),
                   formatNumber(traffic.busBandwidth / kZeroGB))
        : Text::tr("n/a (nothing sent)");
    return {zeroBytesText(state), fitsText(in, stage, state, capacityBytes),
            Text::tr("%1 in %2 msgs")
                .arg(zeroBytesText(traffic.bytes.value()), formatWhole(traffic.messages)),
            zeroSecondsText(traffic.seconds), bandwidth};
}

QString zeroFitsHeader(std::int64_t capacityBytes)
{
    return Text::tr("Fits %1\nat this n?").arg(zeroBytesText(static_cast<double>(capacityBytes)));
}

QString zeroSummary(const core::ZeroInputs& in, const core::LinkModel& link,
                    const core::ZeroResult& result, const core::ZeroTraffic& traffic)
{
    return Text::tr("<b>Per rank</b> at n = %1: DP P(w+g+o) = <b>%2</b> &middot; ZeRO-1 P(w+g) + "
                    "Po/n = <b>%3</b> &middot; ZeRO-2 Pw + P(g+o)/n = <b>%4</b> &middot; ZeRO-3 "
                    "P(w+g+o)/n = <b>%5</b><br>%6")
        .arg(formatWhole(in.ranks), zeroBytesText(result.dp.value()),
             zeroBytesText(result.zero1.value()), zeroBytesText(result.zero2.value()),
             zeroBytesText(result.zero3.value()), ringSummary(in, link, traffic));
}

ZeroFigures computeZeroFigures(const core::ZeroInputs& in, const core::LinkModel& link,
                               std::int64_t capacityBytes)
{
    const core::ZeroResult r = core::computeZero(in);
    const core::ZeroTraffic traffic = core::zeroTraffic(in, link);
    ZeroFigures out;
    out.ranks = in.ranks;
    out.axisEnd = static_cast<double>(zeroRankAxisEnd(in.ranks));
    out.limit = static_cast<double>(capacityBytes) / kZeroGB;
    out.sweep = sweepZeroRanks(in, link);
    const std::array<double, 4> now = stageFigures(r);
    for (std::size_t i = 0; i < kZeroStages.size(); ++i) {
        out.atCurrent << QPointF(static_cast<double>(in.ranks), now[i] / kZeroGB);
        out.breakdown[i] = zeroBreakdown(in, kZeroStages[i]);
        out.table[i] = zeroTableRow(in, kZeroStages[i], zeroStageTraffic(traffic, kZeroStages[i]),
                                    capacityBytes);
    }
    out.fits = zeroFitMarkers(in, capacityBytes, out.axisEnd);
    out.twiceGradients = 2 * (gradientBytes(in) / kZeroGB);
    out.fitsHeader = zeroFitsHeader(capacityBytes);
    out.summary = zeroSummary(in, link, r, traffic);
    return out;
}

QHash<QString, QString> zeroExplanationValues(const core::ZeroInputs& in)
{
    const core::ZeroResult r = core::computeZero(in);
    return {
        {"parameters", formatCount(static_cast<double>(in.parameters))},
        {"ranks", formatWhole(in.ranks)},
        {"w", formatWhole(in.weightBytes)},
        {"g", formatWhole(in.gradBytes)},
        {"o", formatWhole(in.optimizerBytes)},
        {"dp", zeroBytesText(r.dp.value())},
        {"zero1", zeroBytesText(r.zero1.value())},
        {"zero2", zeroBytesText(r.zero2.value())},
        {"zero3", zeroBytesText(r.zero3.value())},
        {"gradient_bytes", zeroBytesText(gradientBytes(in))},
        {"ring_bytes", zeroBytesText(r.ringAllReduceBytesPerRank.value())},
    };
}

} // namespace scalelab::ui
