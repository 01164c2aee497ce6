#include "heatmappairpanel.h"

#include "chartstyle.h"
#include "heatmappanel.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QPainter>
#include <QResizeEvent>
#include <algorithm>
#include <cmath>
#include <limits>

namespace scalelab::ui {

namespace {

constexpr double kGap = 12; // between the two maps, in logical pixels
// What a HeatmapPanel spends around its plot (labels, axis titles, colour bar), roughly: enough
// to judge which arrangement leaves the plots the better shape.
constexpr double kFrameWidth = 220;
constexpr double kFrameHeight = 80;
constexpr double kTitlePadding = 14; // above and below the title line, together

} // namespace

HeatmapPairPanel::HeatmapPairPanel(const QString& name, QWidget* parent)
    : ChartPanel(name, parent)
    , m_left(new HeatmapPanel(name + "-left"))
    , m_right(new HeatmapPanel(name + "-right"))
{
    auto* layout = new QHBoxLayout(this);
    layout->setSpacing(static_cast<int>(kGap));
    layout->addWidget(m_left);
    layout->addWidget(m_right);
    updateMargins();
}

QSize HeatmapPairPanel::minimumSizeHint() const
{
    // The maps one above the other, each whole (HeatmapPanel::minimumSizeHint), under the
    // title wrapped to that width: the narrowest arrangement, which a wider panel turns into
    // maps side by side when they have room there (sideBySide).
    const QSize map = m_left->minimumSizeHint().expandedTo(m_right->minimumSizeHint());
    const int title = static_cast<int>(std::ceil(titleHeight(map.width())));
    return {map.width(), title + 2 * map.height() + static_cast<int>(kGap)};
}

void HeatmapPairPanel::setTitle(const QString& title)
{
    if (title == m_title)
        return;
    const QSize least = minimumSizeHint();
    const int band = static_cast<int>(std::ceil(titleHeight(width())));
    m_title = title;
    updateMargins();
    // A title of as many lines (the FP8 tab's, between a preview and the exact figures) moves
    // nothing: only its band is painted again, and the row the maps stand in is not laid out
    // again at every first key press after a rest.
    if (static_cast<int>(std::ceil(titleHeight(width()))) == band)
        update(0, 0, width(), band);
    else
        update();
    if (minimumSizeHint() != least)
        updateGeometry();
}

void HeatmapPairPanel::setLogScale(bool log)
{
    m_log = log;
    m_left->setLogScale(log);
    m_right->setLogScale(log);
}

std::pair<double, double> HeatmapPairPanel::rangeOf(const Eigen::MatrixXd& left,
                                                    const Eigen::MatrixXd& right, bool log)
{
    // One range over both: the largest value of either at the top, and at the bottom the
    // smallest (on a log scale the smallest positive) value of either.
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    for (const Eigen::MatrixXd* m : {&left, &right}) {
        for (Eigen::Index i = 0; i < m->size(); ++i) {
            const double v = m->data()[i];
            if (!std::isfinite(v))
                continue; // an infinite error takes the top colour without stretching the bar
            if (!log || v > 0)
                lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (!std::isfinite(lo) || !std::isfinite(hi))
        lo = hi = log ? 1.0 : 0.0; // nothing to scale by: an even, arbitrary range
    if (!(hi > lo))
        hi = log ? lo * 10 : lo + 1;
    return {lo, hi};
}

void HeatmapPairPanel::setMatrices(const Eigen::MatrixXd& left, const Eigen::MatrixXd& right)
{
    setMatrices(std::make_shared<const Eigen::MatrixXd>(left),
                std::make_shared<const Eigen::MatrixXd>(right), rangeOf(left, right, m_log));
}

void HeatmapPairPanel::setMatrices(std::shared_ptr<const Eigen::MatrixXd> left,
                                   std::shared_ptr<const Eigen::MatrixXd> right,
                                   std::pair<double, double> range)
{
    m_range = range;
    const Eigen::MatrixXd& before = m_left->matrix();
    const bool reshaped = !left || before.rows() != left->rows() || before.cols() != left->cols();
    m_left->setRange(m_range);
    m_right->setRange(m_range);
    m_left->setMatrix(std::move(left));
    m_right->setMatrix(std::move(right));
    // The maps paint their own changes; the arrangement follows the matrix's shape alone.
    if (reshaped)
        updateDirection();
}

bool HeatmapPairPanel::sideBySide(const QSizeF& size) const
{
    const Eigen::MatrixXd& m = m_left->matrix();
    const double aspect = m.size() > 0 ? double(m.cols()) / double(m.rows()) : 1.0;
    // How far a plot area's width / height is from the matrix's, as a ratio in either direction.
    const auto misfit = [aspect](double w, double h) {
        return std::abs(std::log(std::max(w, 1.0) / std::max(h, 1.0) / aspect));
    };
    // The plot areas each arrangement leaves, after each map's labels and colour bar.
    const QSizeF across((size.width() - kGap) / 2 - kFrameWidth, size.height() - kFrameHeight);
    const QSizeF down(size.width() - kFrameWidth, (size.height() - kGap) / 2 - kFrameHeight);
    // Room for a whole map (every text of it) in each place.
    const QSizeF least = m_left->minimumSizeHint().expandedTo(m_right->minimumSizeHint());
    const auto roomy = [&least](QSizeF plot) {
        return plot.width() + kFrameWidth >= least.width()
            && plot.height() + kFrameHeight >= least.height();
    };
    // Where only one arrangement leaves each plot room, that one (side by side in a panel too
    // narrow for it crowded the labels into black bars); where neither does, the larger plots;
    // otherwise the plots of the matrix's shape.
    if (roomy(across) != roomy(down))
        return roomy(across);
    const auto area = [](QSizeF plot) {
        return std::max(0.0, plot.width()) * std::max(0.0, plot.height());
    };
    if (!roomy(across))
        return area(across) >= area(down);
    return misfit(across.width(), across.height()) <= misfit(down.width(), down.height());
}

void HeatmapPairPanel::updateDirection()
{
    const QSizeF area(width(), height() - titleHeight(width()));
    auto* box = static_cast<QBoxLayout*>(layout());
    const auto direction = sideBySide(area) ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
    if (box->direction() != direction)
        box->setDirection(direction);
}

void HeatmapPairPanel::resizeEvent(QResizeEvent* event)
{
    updateMargins();
    updateDirection();
    ChartPanel::resizeEvent(event);
}

double HeatmapPairPanel::titleHeight(double width) const
{
    // A title wider than the panel wraps onto more lines (it ran off both sides at 1280 x 800
    // in projector type); without a width, one line.
    const QFontMetricsF fm(chartFonts().title);
    if (width <= 0)
        return fm.height() + kTitlePadding;
    return fm.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap | Qt::AlignHCenter, m_title)
               .height()
        + kTitlePadding;
}

void HeatmapPairPanel::updateMargins()
{
    // The maps sit under the title line this panel paints itself.
    const int top = static_cast<int>(std::ceil(titleHeight(width())));
    int left = 0, old = 0, right = 0, bottom = 0;
    layout()->getContentsMargins(&left, &old, &right, &bottom);
    if (old != top)
        layout()->setContentsMargins(0, top, 0, 0);
}

void HeatmapPairPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange || event->type() == QEvent::ApplicationFontChange)
        updateMargins();
    ChartPanel::changeEvent(event);
}

void HeatmapPairPanel::render(QPainter& painter, const QRectF& target)
{
    painter.save();
    painter.fillRect(target, chartBackgroundColor());
    const double th = titleHeight(target.width());
    painter.setPen(chartTextColor());
    painter.setFont(chartFonts().title);
    painter.drawText(QRectF(target.left(), target.top(), target.width(), th),
                     Qt::AlignCenter | Qt::TextWordWrap, m_title);
    const double top = target.top() + th;
    const double height = target.height() - th;
    if (sideBySide(QSizeF(target.width(), height))) {
        const double half = (target.width() - kGap) / 2;
        m_left->render(painter, QRectF(target.left(), top, half, height));
        m_right->render(painter, QRectF(target.left() + half + kGap, top, half, height));
    } else {
        const double half = (height - kGap) / 2;
        m_left->render(painter, QRectF(target.left(), top, target.width(), half));
        m_right->render(painter, QRectF(target.left(), top + half + kGap, target.width(), half));
    }
    painter.restore();
}

void HeatmapPairPanel::paintEvent(QPaintEvent*)
{
    // The title line and the gap between the maps: the maps paint themselves.
    QPainter painter(this);
    const double th = titleHeight(width());
    painter.fillRect(rect(), chartBackgroundColor());
    painter.setPen(chartTextColor());
    painter.setFont(chartFonts().title);
    painter.drawText(QRectF(0, 0, width(), th), Qt::AlignCenter | Qt::TextWordWrap, m_title);
}

} // namespace scalelab::ui
