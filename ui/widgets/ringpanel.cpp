#include "ringpanel.h"

#include "chartstyle.h"
#include "format.h"

#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSlider>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace scalelab::ui {

namespace {

/// Time a step stays on screen while playing: long enough to read the arrows and the sums.
constexpr int kStepMilliseconds = 1100;

/// The buffers' shading runs from white (one rank's own value) to this (the full sum).
const QColor kCompleteShade{86, 180, 233};

QColor mix(const QColor& a, const QColor& b, double t)
{
    const auto channel = [t](int x, int y) {
        return static_cast<int>(std::lround(x + (y - x) * t));
    };
    return QColor(channel(a.red(), b.red()), channel(a.green(), b.green()),
                  channel(a.blue(), b.blue()));
}

QColor textOn(const QColor& background)
{
    return background.lightnessF() > 0.55 ? Qt::black : Qt::white;
}

QFont scaledFont(QFont font, double scale)
{
    font.setPointSizeF(std::max(5.0, font.pointSizeF() * scale));
    return font;
}

QPointF onCircle(const QPointF& centre, double radius, double angle)
{
    return centre + radius * QPointF(std::cos(angle), std::sin(angle));
}

/// Rank r sits at angle -90 degrees + r/n of a turn: rank 0 at the top, the ring clockwise.
double rankAngle(int rank, int ranks)
{
    return -std::numbers::pi / 2 + 2 * std::numbers::pi * rank / ranks;
}

} // namespace

RingPanel::RingPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
    , m_strip(new QWidget(this))
    , m_play(new QToolButton(m_strip))
    , m_slider(new QSlider(Qt::Horizontal, m_strip))
    , m_stepLabel(new QLabel(m_strip))
    , m_fewer(new QPushButton(tr("Watch &8 ranks"), m_strip))
    , m_timer(new QTimer(this))
{
    setMinimumSize(320, 260);
    setAttribute(Qt::WA_OpaquePaintEvent);

    m_play->setObjectName("zero.ring_play");
    m_play->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_play->setCheckable(true);
    m_play->setAccessibleDescription(tr("Plays the ring all-reduce one step at a time"));
    m_slider->setObjectName("zero.ring_step");
    m_slider->setAccessibleName(tr("Ring all-reduce step"));
    m_slider->setAccessibleDescription(
        tr("0 is the start; then n-1 reduce-scatter and n-1 all-gather steps"));
    m_slider->setPageStep(1);
    m_slider->setTickPosition(QSlider::TicksBelow);
    m_slider->setTickInterval(1);
    m_stepLabel->setObjectName("zero.ring_step_label");
    m_stepLabel->setMinimumWidth(m_stepLabel->fontMetrics().horizontalAdvance("step 30 of 30") + 8);
    m_fewer->setObjectName("zero.ring_fewer");
    m_fewer->setAccessibleDescription(tr("Sets the rank count to 8 so the ring can be drawn"));
    m_fewer->hide();

    auto* strip = new QHBoxLayout(m_strip);
    strip->setContentsMargins(6, 2, 6, 4);
    strip->addWidget(m_play);
    strip->addWidget(m_slider, 1);
    strip->addWidget(m_stepLabel);
    strip->addWidget(m_fewer);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addStretch(1); // the picture, painted by paintEvent
    layout->addWidget(m_strip);

    m_timer->setInterval(kStepMilliseconds);
    connect(m_timer, &QTimer::timeout, this, &RingPanel::advance);
    connect(m_play, &QToolButton::toggled, this, &RingPanel::setPlaying);
    connect(m_slider, &QSlider::valueChanged, this, &RingPanel::setStep);
    connect(m_fewer, &QPushButton::clicked, this, [this] { emit fewerRanksRequested(8); });
    syncControls();
}

QColor RingPanel::rankColor(int rank)
{
    // Okabe-Ito first (colour-blind safe), then Paul Tol's muted scheme for ranks 8..15.
    static const std::array<QColor, kMaxRanks> colours = {
        palette::kBlue,       palette::kOrange,      palette::kGreen,       palette::kVermillion,
        palette::kPurple,     palette::kSkyBlue,     palette::kYellow,      QColor(90, 90, 90),
        QColor(51, 34, 136),  QColor(136, 204, 238), QColor(68, 170, 153),  QColor(17, 119, 51),
        QColor(153, 153, 51), QColor(221, 204, 119), QColor(204, 102, 119), QColor(136, 34, 85)};
    return colours[static_cast<std::size_t>(((rank % kMaxRanks) + kMaxRanks) % kMaxRanks)];
}

QAbstractButton* RingPanel::playButton() const
{
    return m_play;
}

void RingPanel::setDemo(const core::RingDemo& demo, std::int64_t bytesPerValue)
{
    const bool sameShape = m_tooMany == 0 && demo.inputs.rows() == m_demo.inputs.rows()
        && demo.inputs.cols() == m_demo.inputs.cols();
    m_demo = demo;
    m_bytesPerValue = bytesPerValue;
    m_tooMany = 0;
    if (!sameShape) {
        setPlaying(false);
        m_step = 0;
    }
    m_step = std::clamp(m_step, 0, lastStep());
    syncControls();
    changed();
}

void RingPanel::showTooManyRanks(std::int64_t ranks)
{
    setPlaying(false);
    m_tooMany = ranks;
    m_demo = core::RingDemo{};
    m_step = 0;
    syncControls();
    changed();
}

int RingPanel::lastStep() const
{
    return m_demo.ring.steps.empty() ? 0 : static_cast<int>(m_demo.ring.steps.size()) - 1;
}

const core::RingStep* RingPanel::currentStep() const
{
    if (m_tooMany > 0 || m_demo.ring.steps.empty())
        return nullptr;
    return &m_demo.ring.steps[static_cast<std::size_t>(m_step)];
}

void RingPanel::setStep(int step)
{
    step = std::clamp(step, 0, lastStep());
    if (step == m_step)
        return;
    m_step = step;
    syncControls();
    changed();
    emit stepChanged(m_step);
}

bool RingPanel::isPlaying() const
{
    return m_timer->isActive();
}

void RingPanel::setPlaying(bool play)
{
    play = play && m_tooMany == 0 && lastStep() > 0;
    if (play == isPlaying()) {
        syncControls();
        return;
    }
    if (play) {
        if (m_step >= lastStep())
            setStep(0); // play from the start once the end has been reached
        m_timer->start();
    } else {
        m_timer->stop();
    }
    syncControls();
}

void RingPanel::advance()
{
    if (m_step < lastStep())
        setStep(m_step + 1);
    if (m_step >= lastStep())
        setPlaying(false);
}

void RingPanel::syncControls()
{
    const bool ring = m_tooMany == 0;
    {
        const QSignalBlocker block(m_slider);
        m_slider->setRange(0, lastStep());
        m_slider->setValue(m_step);
    }
    m_slider->setEnabled(ring && lastStep() > 0);
    m_play->setEnabled(ring && lastStep() > 0);
    {
        const QSignalBlocker block(m_play);
        m_play->setChecked(isPlaying());
    }
    const bool playing = isPlaying();
    m_play->setText(playing ? tr("Pause") : tr("Play"));
    m_play->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    m_play->setAccessibleName(playing ? tr("Pause the ring") : tr("Play the ring"));
    m_stepLabel->setText(ring ? stepCaption() : tr("not drawn"));
    m_stepLabel->setVisible(ring);
    m_fewer->setVisible(!ring);
    // A screen reader hears what the picture shows.
    setAccessibleName(tr("Ring all-reduce"));
    setAccessibleDescription(ring ? phaseText() + ", " + stepCaption()
                                  : tr("too many ranks to draw"));
}

QString RingPanel::stepCaption() const
{
    return tr("step %1 of %2").arg(m_step).arg(lastStep());
}

QString RingPanel::phaseText() const
{
    const core::RingStep* s = currentStep();
    if (!s)
        return tr("Too many ranks to draw");
    const int n = static_cast<int>(m_demo.inputs.rows());
    switch (s->phase) {
    case core::RingStep::Phase::Start:
        return n == 1 ? tr("One rank") : tr("Start");
    case core::RingStep::Phase::ReduceScatter:
        return tr("Reduce-scatter step %1 of %2").arg(s->index).arg(n - 1);
    case core::RingStep::Phase::AllGather:
        return tr("All-gather step %1 of %2").arg(s->index).arg(n - 1);
    }
    return {};
}

void RingPanel::paintEvent(QPaintEvent*)
{
    // The picture changes only with the state, the size or the style; every other repaint
    // (a neighbour redrawn, an expose) copies the cached image instead of laying out all the
    // text again.
    const int bottom = m_strip->isVisible() ? m_strip->geometry().top() : height();
    const QSize size(width(), bottom);
    const qreal ratio = devicePixelRatioF();
    const QString key = QString("%1 %2 %3 %4 %5 %6 %7")
                            .arg(m_version)
                            .arg(size.width())
                            .arg(size.height())
                            .arg(ratio)
                            .arg(chartBackgroundColor().rgba())
                            .arg(chartTextColor().rgba())
                            .arg(chartFonts().title.toString());
    if (key != m_cacheKey || m_cache.isNull()) {
        m_cache = QPixmap((QSizeF(size) * ratio).toSize());
        m_cache.setDevicePixelRatio(ratio);
        m_cache.fill(Qt::transparent);
        QPainter picture(&m_cache);
        render(picture, QRectF(QPointF(0, 0), QSizeF(size)));
        m_cacheKey = key;
    }
    QPainter painter(this);
    painter.fillRect(rect(), palette().window());
    painter.drawPixmap(0, 0, m_cache);
}

void RingPanel::changed()
{
    ++m_version;
    update();
}

void RingPanel::render(QPainter& painter, const QRectF& target)
{
    const ChartFonts f = chartFonts();
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.fillRect(target, chartBackgroundColor());
    const QColor ink = chartTextColor();
    const QRectF area = target.adjusted(8, 6, -8, -6);

    const int n = static_cast<int>(m_demo.inputs.rows());
    QString title = tr("Ring all-reduce, step by step");
    if (m_tooMany == 0 && n > 0)
        title = tr("Ring all-reduce of a demo gradient, %1 x %2 values")
                    .arg(n == 1 ? tr("1 rank") : tr("%1 ranks").arg(n))
                    .arg(m_demo.inputs.cols());
    // Title and phase line keep the charts' sizes; the ring and the buffers shrink with a small
    // panel (never below what the window's own labels use).
    const double scale =
        std::clamp(std::min(area.width() / 900.0, area.height() / 560.0), 0.7, 1.0);
    QFont titleFont = f.title;
    // A narrow panel: shrink the title until it fits (hinting makes widths step, hence a loop).
    while (QFontMetricsF(titleFont).horizontalAdvance(title) > area.width()
           && titleFont.pointSizeF() > 6)
        titleFont.setPointSizeF(titleFont.pointSizeF() * 0.94);
    const QFontMetricsF titleFm(titleFont);
    painter.setFont(titleFont);
    painter.setPen(ink);
    const QRectF titleRect(area.left(), area.top(), area.width(), titleFm.height() + 4);
    painter.drawText(titleRect, Qt::AlignHCenter | Qt::AlignTop, title);
    const QRectF body(area.left(), titleRect.bottom() + 4, area.width(),
                      area.bottom() - titleRect.bottom() - 4);

    if (m_tooMany > 0 || n == 0) {
        renderNote(painter, body);
        painter.restore();
        return;
    }

    // The phase line: what happens in this step, in words.
    const core::RingStep& s = *currentStep();
    QFont phaseFont = f.axisTitle;
    phaseFont.setBold(true);
    QFontMetricsF phaseFm(phaseFont);
    QString what;
    switch (s.phase) {
    case core::RingStep::Phase::Start:
        what = n == 1 ? tr("nothing to send, its values are already the sum")
                      : tr("each rank holds its own gradients, cut into %1 chunks").arg(n);
        break;
    case core::RingStep::Phase::ReduceScatter:
        what = tr("each rank sends one chunk to the next, which adds it to its own");
        break;
    case core::RingStep::Phase::AllGather:
        what = m_step == lastStep()
            ? tr("done: every rank holds the plain sum")
            : tr("each rank passes a finished chunk on; the next one copies it");
        break;
    }
    painter.setFont(phaseFont);
    const QRectF phaseRect(body.left(), body.top(), body.width(), phaseFm.height() * 2 + 4);
    while (phaseFm.horizontalAdvance(phaseText() + ": " + what) > 2 * area.width()
           && phaseFont.pointSizeF() > 6) {
        phaseFont.setPointSizeF(phaseFont.pointSizeF() * 0.94);
        painter.setFont(phaseFont);
        phaseFm = QFontMetricsF(phaseFont);
    }
    painter.drawText(phaseRect, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
                     phaseText() + ": " + what);
    const double phaseHeight =
        phaseFm
            .boundingRect(phaseRect, Qt::AlignHCenter | Qt::TextWordWrap, phaseText() + ": " + what)
            .height();

    // The caption: how to read the shading, and the formula the bytes follow.
    const QFont captionFont = scaledFont(f.annotation, scale);
    const QFontMetricsF captionFm(captionFont);
    const core::Ratio perRank = core::ringAllReduceBytes(m_demo.inputs.cols() * m_bytesPerValue,
                                                         static_cast<std::int64_t>(n));
    const QString caption =
        tr("Shading: how many ranks a value already sums (white: 1, blue: all %1). Outlined: the "
           "chunk each rank received in this step. After all 2(n-1) = %2 steps each rank has sent "
           "2(n-1)/n of the %3-byte tensor = %4 bytes (%5 bytes a value).")
            .arg(n)
            .arg(2 * (n - 1))
            .arg(m_demo.inputs.cols() * m_bytesPerValue)
            .arg(formatNumber(perRank.value(), 6))
            .arg(m_bytesPerValue);
    // As tall as the wrapped caption needs: a small panel wraps it onto more lines.
    const double captionHeight =
        captionFm.boundingRect(QRectF(0, 0, body.width(), 1e6), Qt::TextWordWrap, caption).height();
    const QRectF captionBox(body.left(), body.bottom() - captionHeight - 2, body.width(),
                            captionHeight + 2);
    painter.setFont(captionFont);
    painter.setPen(ink);
    painter.drawText(captionBox, Qt::AlignHCenter | Qt::AlignBottom | Qt::TextWordWrap, caption);

    const QRectF content(body.left(), body.top() + phaseHeight + 8, body.width(),
                         captionBox.top() - body.top() - phaseHeight - 14);
    const double ringWidth = std::min(content.height() * 1.05, content.width() * 0.36);
    renderRing(painter, QRectF(content.left(), content.top(), ringWidth, content.height()), scale);
    renderBuffers(painter,
                  QRectF(content.left() + ringWidth + 12, content.top(),
                         content.width() - ringWidth - 12, content.height()),
                  scale);
    painter.restore();
}

void RingPanel::renderRing(QPainter& painter, const QRectF& area, double scale)
{
    const core::RingStep& s = *currentStep();
    const int n = static_cast<int>(m_demo.inputs.rows());
    QFont labelFont = scaledFont(chartFonts().annotation, scale);
    labelFont.setBold(true);
    const QFontMetricsF fm(labelFont);
    const QPointF centre = area.center();
    const double radius =
        std::max(10.0, std::min(area.width(), area.height()) / 2 - fm.height() * 1.6 - 4);
    const double nodeRadius =
        std::clamp(std::numbers::pi * radius / std::max(n, 1) * 0.55, 9.0, 24.0 * scale);
    const bool moving = s.phase != core::RingStep::Phase::Start;

    // The links: an arc from each rank to the next, bulging outwards so that two ranks still
    // show two arrows. In a step each arc carries the sender's colour and the chunk it sends.
    for (int r = 0; r < n && n > 1; ++r) {
        const int to = (r + 1) % n;
        const QPointF from = onCircle(centre, radius, rankAngle(r, n));
        const QPointF end = onCircle(centre, radius, rankAngle(to, n));
        const double middle = rankAngle(r, n) + std::numbers::pi / n;
        // A quadratic curve's midpoint lies halfway between the chord's midpoint and the
        // control point: put it just outside the circle.
        const double controlDistance = 2.12 * radius - radius * std::cos(std::numbers::pi / n);
        const QPointF control = onCircle(centre, controlDistance, middle);
        const QColor colour = moving ? rankColor(r) : QColor(160, 160, 160);
        const double width = moving ? std::max(3.0, 4.5 * scale) : 2.0;
        QPainterPath path(from);
        path.quadTo(control, end);
        painter.setPen(QPen(colour, width, Qt::SolidLine, Qt::RoundCap));
        painter.setBrush(Qt::NoBrush);
        painter.drawPath(path);
        // The arrowhead sits where the curve meets the receiving node's rim.
        const QPointF direction = end - control;
        const double length = std::hypot(direction.x(), direction.y());
        const QPointF unit = direction / length;
        const QPointF tip = end - unit * (nodeRadius + 1.5);
        const QPointF normal(-unit.y(), unit.x());
        const double head = moving ? 9.0 + 4.0 * scale : 8.0;
        QPolygonF arrow;
        arrow << tip << tip - unit * head * 1.5 + normal * head * 0.7
              << tip - unit * head * 1.5 - normal * head * 0.7;
        painter.setPen(Qt::NoPen);
        painter.setBrush(colour);
        painter.drawPolygon(arrow);
        if (moving) {
            const int chunk = s.sentChunk[static_cast<std::size_t>(r)];
            const QString label = tr("c%1").arg(chunk);
            const QPointF at = onCircle(centre, radius * 1.06 + fm.height() * 0.85, middle);
            const QRectF box(at.x() - fm.horizontalAdvance(label) / 2 - 3, at.y() - fm.height() / 2,
                             fm.horizontalAdvance(label) + 6, fm.height());
            painter.setBrush(Qt::white);
            painter.setPen(QPen(colour, 1.5));
            painter.drawRoundedRect(box, 3, 3);
            painter.setPen(Qt::black);
            painter.setFont(labelFont);
            painter.drawText(box, Qt::AlignCenter, label);
        }
    }

    // The ranks, each in its colour with its number.
    QFont nodeFont = labelFont;
    if (QFontMetricsF(nodeFont).horizontalAdvance("15") > nodeRadius * 1.7)
        nodeFont.setPointSizeF(std::max(5.0,
                                        nodeFont.pointSizeF() * nodeRadius * 1.7
                                            / QFontMetricsF(nodeFont).horizontalAdvance("15")));
    painter.setFont(nodeFont);
    for (int r = 0; r < n; ++r) {
        const QPointF p = n == 1 ? centre : onCircle(centre, radius, rankAngle(r, n));
        const QColor colour = rankColor(r);
        painter.setPen(QPen(Qt::black, 1.5));
        painter.setBrush(colour);
        painter.drawEllipse(p, nodeRadius, nodeRadius);
        painter.setPen(textOn(colour));
        painter.drawText(
            QRectF(p.x() - nodeRadius, p.y() - nodeRadius, 2 * nodeRadius, 2 * nodeRadius),
            Qt::AlignCenter, QString::number(r));
    }
    if (n > 1) {
        painter.setPen(chartTextColor());
        painter.setFont(scaledFont(chartFonts().annotation, scale));
        painter.drawText(
            QRectF(centre.x() - radius * 0.7, centre.y() - radius * 0.5, radius * 1.4, radius),
            Qt::AlignCenter | Qt::TextWordWrap, tr("each rank sends to the next, clockwise"));
    }
}

void RingPanel::renderBuffers(QPainter& painter, const QRectF& area, double scale)
{
    const core::RingStep& s = *currentStep();
    const int n = static_cast<int>(m_demo.inputs.rows());
    const auto values = static_cast<int>(m_demo.inputs.cols());
    const std::vector<std::int64_t>& sizes = m_demo.ring.chunkSizes;

    // Fit the type to the rows and columns: n ranks, a header and the plain sum.
    QFont font = scaledFont(chartFonts().annotation, scale);
    const double rows = n + 2.5;
    // Rows no taller than a comfortable line: a ring of one or two ranks stays compact, centred.
    const double rowHeight = std::min(area.height() / rows, QFontMetricsF(font).height() * 2.6);
    const double gap = 5;
    const auto widths = [&](const QFont& probe) {
        const QFontMetricsF fm(probe);
        const double label = 14 + fm.horizontalAdvance(tr("rank 15")) + 10;
        const double sent = fm.horizontalAdvance(tr("sent (bytes)")) + 10;
        const double cell = fm.horizontalAdvance("999") + 8;
        return std::tuple{label, sent, cell, fm.height()};
    };
    {
        const auto [label, sent, cell, height] = widths(font);
        const double needed = label + sent + values * cell + gap * n;
        const double shrink = std::min({1.0, area.width() / needed, rowHeight * 0.8 / height});
        font.setPointSizeF(std::max(5.0, font.pointSizeF() * shrink));
    }
    const auto [labelWidth, sentWidth, minCell, textHeight] = widths(font);
    (void)minCell;
    (void)textHeight;
    QFont bold = font;
    bold.setBold(true);
    const QFontMetricsF fm(font);
    const double cellWidth =
        std::min((area.width() - labelWidth - sentWidth - gap * n) / values, rowHeight * 2.2);
    const double gridWidth = labelWidth + values * cellWidth + gap * n + sentWidth;
    const double left = area.left() + std::max(0.0, (area.width() - gridWidth) / 2);
    const double top = area.top() + (area.height() - rows * rowHeight) / 2;

    // Where each chunk starts, in values and in pixels.
    std::vector<double> chunkX(static_cast<std::size_t>(n) + 1);
    std::vector<int> chunkStart(static_cast<std::size_t>(n) + 1, 0);
    double x = left + labelWidth;
    for (int c = 0; c < n; ++c) {
        chunkX[static_cast<std::size_t>(c)] = x;
        chunkStart[static_cast<std::size_t>(c) + 1] = chunkStart[static_cast<std::size_t>(c)]
            + static_cast<int>(sizes[static_cast<std::size_t>(c)]);
        x += static_cast<double>(sizes[static_cast<std::size_t>(c)]) * cellWidth + gap;
    }
    chunkX[static_cast<std::size_t>(n)] = x;
    const double sentX = x;

    // Header: chunk names over their values, and the bytes column.
    painter.setFont(font);
    painter.setPen(chartTextColor());
    for (int c = 0; c < n; ++c) {
        const QRectF box(chunkX[static_cast<std::size_t>(c)], top,
                         chunkX[static_cast<std::size_t>(c) + 1]
                             - chunkX[static_cast<std::size_t>(c)] - gap,
                         rowHeight);
        const QString full = tr("chunk %1").arg(c);
        const QString text = fm.horizontalAdvance(full) <= box.width() ? full : tr("c%1").arg(c);
        painter.drawText(box, Qt::AlignCenter, text);
    }
    painter.drawText(QRectF(sentX, top, sentWidth, rowHeight), Qt::AlignRight | Qt::AlignVCenter,
                     tr("sent (bytes)"));

    // Which chunk each rank received in this step: the one its left-hand neighbour sent.
    const auto received = [&](int rank) {
        if (s.phase == core::RingStep::Phase::Start || n < 2)
            return -1;
        return s.sentChunk[static_cast<std::size_t>((rank - 1 + n) % n)];
    };

    const double cellPad = std::max(1.0, std::min(3.0, rowHeight * 0.08));
    for (int r = 0; r < n; ++r) {
        const double y = top + (r + 1) * rowHeight;
        // Row label: the rank's colour and number, as on the ring.
        const QColor colour = rankColor(r);
        const double swatch = std::min(12.0, rowHeight * 0.6);
        painter.setPen(QPen(Qt::black, 1));
        painter.setBrush(colour);
        painter.drawEllipse(QRectF(left, y + (rowHeight - swatch) / 2, swatch, swatch));
        painter.setPen(chartTextColor());
        painter.setFont(font);
        painter.drawText(QRectF(left + swatch + 4, y, labelWidth - swatch - 8, rowHeight),
                         Qt::AlignLeft | Qt::AlignVCenter, tr("rank %1").arg(r));
        for (int c = 0; c < n; ++c) {
            const int contributors = core::ringContributors(n, s.phase, s.index, r, c);
            const QColor shade =
                mix(Qt::white, kCompleteShade, n > 1 ? (contributors - 1.0) / (n - 1.0) : 1.0);
            for (int i = chunkStart[static_cast<std::size_t>(c)];
                 i < chunkStart[static_cast<std::size_t>(c) + 1]; ++i) {
                const QRectF cell(chunkX[static_cast<std::size_t>(c)]
                                      + (i - chunkStart[static_cast<std::size_t>(c)]) * cellWidth,
                                  y, cellWidth, rowHeight);
                const QRectF inner =
                    cell.adjusted(cellPad / 2, cellPad / 2, -cellPad / 2, -cellPad / 2);
                painter.setPen(QPen(QColor(170, 170, 170), 1));
                painter.setBrush(shade);
                painter.drawRect(inner);
                painter.setPen(textOn(shade));
                painter.setFont(contributors == n ? bold : font);
                painter.drawText(inner, Qt::AlignCenter, formatNumber(s.buffers(r, i), 6));
            }
            if (received(r) == c && sizes[static_cast<std::size_t>(c)] > 0) {
                const QRectF chunk(chunkX[static_cast<std::size_t>(c)] - 1, y - 1,
                                   chunkX[static_cast<std::size_t>(c) + 1]
                                       - chunkX[static_cast<std::size_t>(c)] - gap + 2,
                                   rowHeight + 2);
                painter.setBrush(Qt::NoBrush);
                painter.setPen(QPen(chartTextColor(), std::max(2.5, 3.0 * scale)));
                painter.drawRect(chunk);
            }
        }
        painter.setPen(chartTextColor());
        painter.setFont(font);
        painter.drawText(QRectF(sentX, y, sentWidth, rowHeight), Qt::AlignRight | Qt::AlignVCenter,
                         formatWhole(s.bytesSent[static_cast<std::size_t>(r)]));
    }

    // The plain sum, computed without the ring, under a rule.
    const double sumY = top + (n + 1.5) * rowHeight;
    painter.setPen(QPen(chartTextColor(), 1.5));
    painter.drawLine(QPointF(left, sumY - rowHeight * 0.25),
                     QPointF(sentX + sentWidth, sumY - rowHeight * 0.25));
    painter.setFont(bold);
    painter.setPen(chartTextColor());
    painter.drawText(QRectF(left, sumY, labelWidth, rowHeight), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("plain sum"));
    for (int c = 0; c < n; ++c)
        for (int i = chunkStart[static_cast<std::size_t>(c)];
             i < chunkStart[static_cast<std::size_t>(c) + 1]; ++i) {
            const QRectF cell(chunkX[static_cast<std::size_t>(c)]
                                  + (i - chunkStart[static_cast<std::size_t>(c)]) * cellWidth,
                              sumY, cellWidth, rowHeight);
            painter.drawText(cell, Qt::AlignCenter, formatNumber(m_demo.plainSum(i), 6));
        }
}

void RingPanel::renderNote(QPainter& painter, const QRectF& area)
{
    const ChartFonts f = chartFonts();
    const std::int64_t n = m_tooMany;
    if (n <= 0)
        return; // nothing set yet
    // The ring itself still fits as a circle of dots (a line past 256 ranks), without values.
    const double side = std::min(area.height(), area.width() * 0.55);
    const QRectF ringArea(area.left(), area.top() + (area.height() - side) / 2, side, side);
    const QPointF centre = ringArea.center();
    const double radius = side / 2 - 8;
    painter.setPen(QPen(QColor(170, 170, 170), 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawEllipse(centre, radius, radius);
    if (n > 0 && n <= 256) {
        const double dot =
            std::clamp(std::numbers::pi * radius / static_cast<double>(n) * 0.5, 2.0, 7.0);
        painter.setPen(Qt::NoPen);
        painter.setBrush(chartTextColor());
        for (std::int64_t r = 0; r < n; ++r)
            painter.drawEllipse(
                onCircle(centre, radius, rankAngle(static_cast<int>(r), static_cast<int>(n))), dot,
                dot);
    }
    painter.setPen(chartTextColor());
    painter.setFont(f.axisTitle);
    painter.drawText(ringArea, Qt::AlignCenter, tr("%1 ranks").arg(formatWhole(n)));

    const QString text =
        tr("%1 ranks are too many to draw with their values: the ring is drawn for up to %2.\n\n"
           "The algorithm is the same: each rank sends 2(n-1) = %3 messages, each 1/%1 of the "
           "gradients, so it sends 2(n-1)/n = %4 times the gradient tensor in all (the traffic "
           "chart shows it).\n\nSet %2 ranks or fewer to watch the chunks move.")
            .arg(formatWhole(n))
            .arg(kMaxRanks)
            .arg(formatWhole(2 * (n - 1)))
            .arg(formatNumber(2.0 * static_cast<double>(n - 1) / static_cast<double>(n), 4));
    painter.setPen(chartTextColor());
    painter.setFont(f.axisTitle);
    const QRectF textArea(ringArea.right() + 24, area.top(), area.right() - ringArea.right() - 24,
                          area.height());
    painter.drawText(textArea, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, text);
}

} // namespace scalelab::ui
