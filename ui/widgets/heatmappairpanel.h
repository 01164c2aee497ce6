#pragma once

#include "chartpanel.h"

#include <Eigen/Core>
#include <QString>
#include <memory>
#include <utility>

namespace scalelab::ui {

class HeatmapPanel;

/// Two heatmaps under one title, drawn and exported as one chart. Both use one colour range, the
/// range of the two matrices together: a comparison is only honest when the same colour means
/// the same value on both sides. The maps sit side by side, or one above the other when that
/// gives a wide matrix (64 x 256, say) more room: whichever arrangement's map areas are closer
/// in shape to the matrix. On screen the two maps are live HeatmapPanels (hovering a cell tells
/// its value); render() draws the same picture into any rectangle for export.
class HeatmapPairPanel : public ChartPanel {
    Q_OBJECT

public:
    explicit HeatmapPairPanel(const QString& name, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    QString title() const override { return m_title; }
    HeatmapPanel* left() const { return m_left; }
    HeatmapPanel* right() const { return m_right; }

    /// Colours on a log10 scale for both maps (the shared range then starts at the smallest
    /// positive value of either matrix).
    void setLogScale(bool log);
    /// Sets both matrices and gives both maps their common range.
    void setMatrices(const Eigen::MatrixXd& left, const Eigen::MatrixXd& right);
    /// Shares both matrices (no copy) with `range` found beforehand by rangeOf() on the current
    /// scale: a tab's worker finds it, so a million-cell pair costs the GUI thread nothing.
    void setMatrices(std::shared_ptr<const Eigen::MatrixXd> left,
                     std::shared_ptr<const Eigen::MatrixXd> right, std::pair<double, double> range);
    /// The range two matrices colour over together: from the smallest value (on a log scale,
    /// the smallest positive one) of either to the largest finite one. Safe on any thread.
    static std::pair<double, double> rangeOf(const Eigen::MatrixXd& left,
                                             const Eigen::MatrixXd& right, bool log);
    bool logScale() const { return m_log; }
    /// The range both maps colour over.
    std::pair<double, double> sharedRange() const { return m_range; }
    /// Whether the maps sit side by side (else one above the other) in an area of `size`
    /// below the title.
    bool sideBySide(const QSizeF& size) const;

    QSize minimumSizeHint() const override;

    void render(QPainter& painter, const QRectF& target) override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    /// The title's lines at `width` (one line for 0) and the room around them.
    double titleHeight(double width) const;
    void updateMargins();
    void updateDirection();

    QString m_title;
    bool m_log = false;
    std::pair<double, double> m_range{0.0, 1.0};
    HeatmapPanel* m_left;
    HeatmapPanel* m_right;
};

} // namespace scalelab::ui
