#pragma once

#include "chartpanel.h"
#include "scalelab/core/pipeline.h"

#include <QColor>
#include <QFont>
#include <QHash>
#include <QImage>
#include <QRectF>
#include <QStaticText>
#include <QStringList>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace scalelab::ui {

/// The Gantt chart's kept texts (defined with it, in ganttpanel.cpp): values kept for texts in a
/// few fonts, found by the font itself: comparing fonts takes far
/// less time than spelling out a font's key for every one of hundreds of box labels. Texts
/// that change on every step (the title's and the figures' numbers, the ticks) would fill a
/// table without end: past a few thousand it is emptied, and they are worked out again.
template <typename T> class ByFont {
public:
    QHash<QString, T>& in(const QFont& font);

private:
    std::vector<std::pair<QFont, QHash<QString, T>>> m_tables;
};

/// Widths of texts, measured once each: the legend, the row labels, the axis titles and
/// most box labels are the same from one paint to the next, and measuring a text shapes it
/// again every time.
class TextWidths {
public:
    double of(const QFont& font, const QString& text);
    /// `text`, elided at the right to at most `width` (itself when it fits).
    QString elided(const QFont& font, const QString& text, double width);

private:
    ByFont<double> m_widths;
};

/// A pipeline schedule as a Gantt chart: one row per stage, time to the right, one box per pass
/// of the core's simulated events. Forwards are light and backwards dark (told apart in grey
/// scale too); for interleaved schedules the hue says the chunk. Idle time is hatched grey: the
/// bubble. Microbatch numbers are written only in boxes wide enough for them, so labels never
/// overlap; hovering a box tells everything about its pass.
///
/// Drawing stays within a frame at 65,536 passes: boxes are batched by colour, and when boxes are
/// narrower than two device pixels each row is drawn as one strip of pixels whose colours are the
/// time-weighted mix of the passes that fall in each pixel (nothing is dropped, as the heatmap
/// pools).
class GanttPanel : public ChartPanel {
    Q_OBJECT

public:
    /// What a piece of laid-out text is (tests check that none of them overlap).
    enum class TextKind { Title, Figure, AxisTitle, TickLabel, RowLabel, BoxLabel, Legend };
    struct Text {
        TextKind kind;
        QString text;
        QRectF rect; ///< where it is drawn, in the coordinates of the target
        std::size_t box = 0; ///< for BoxLabel: the event it belongs to
    };
    struct Layout {
        QRectF title, figures, plot, ticks, xTitle, yTitle, rowLabels, legend;
        double timeEnd = 1.0; ///< the time at the plot's right edge (a round number >= makespan)
        double tickStep = 1.0;
        int tickDecimals = 0;
        double rowPitch = 1.0; ///< distance between rows
        double boxHeight = 1.0; ///< height of a box inside its row
    };

    explicit GanttPanel(const QString& name, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    /// The time axis title with its unit.
    void setTimeAxisTitle(const QString& title);
    /// The row axis title, e.g. "Pipeline stage".
    void setRowAxisTitle(const QString& title);
    /// Each row's label (e.g. "0: 0, 7", a device and the stages it holds); rows past the list,
    /// and every row while it is empty, show their number.
    void setRowLabels(const QStringList& labels);
    QStringList rowLabels() const { return m_rowLabels; }
    /// The unit times are given in, for the hover text ("time units").
    void setTimeUnit(const QString& unit);
    /// Figures shown side by side under the title (the measured and the closed-form bubble).
    void setFigures(const QStringList& figures);
    /// The schedule: events ordered by stage, then start (as core::simulatePipeline gives them),
    /// `stages` rows, `chunks` model chunks per stage, the makespan.
    void setSchedule(std::vector<core::PipelineEvent> events, int stages, int chunks,
                     double makespan);

    const std::vector<core::PipelineEvent>& events() const { return m_events; }
    int stages() const { return m_stages; }
    int chunks() const { return m_chunks; }
    double makespan() const { return m_makespan; }
    QString title() const override { return m_title; }
    QStringList figures() const { return m_figures; }
    QString timeAxisTitle() const { return m_xTitle; }

    /// Fill colour of a pass: light for forwards, dark for backwards, hue by chunk. An
    /// overlapped F&B box is drawn in two halves, the forward's colour over the backward's,
    /// with a black border round both.
    static QColor passColor(core::Pass pass, int chunk);
    /// Whether the schedule has overlapped F&B passes (DualPipe, DualPipeV).
    bool overlapped() const { return m_overlapped; }

    /// Where everything goes in `target`: worked out once per change and target, and kept (a
    /// paint asks three times, and each time measures texts).
    Layout layoutFor(const QRectF& target) const;
    /// The box of event `index` for a layout.
    QRectF boxRect(const Layout& layout, std::size_t index) const;
    /// The band of a stage's row in which its boxes sit.
    QRectF rowRect(const Layout& layout, int stage) const;
    /// Every piece of text render() draws into `target`, where it draws it.
    std::vector<Text> texts(const QRectF& target) const;
    /// The event under `pos` for a chart drawn into `target`, or -1 (idle time, outside).
    long long eventAt(const QRectF& target, const QPointF& pos) const;
    /// What hovering `pos` tells: the pass (stage, microbatch, chunk, pass, start, end) or the
    /// idle stage; empty outside the rows.
    QString describeAt(const QRectF& target, const QPointF& pos) const;
    /// Whether boxes are drawn as pooled pixel strips (too narrow to draw one by one).
    bool drawsPooled(const QRectF& target, double deviceScale = 1.0) const;

    void render(QPainter& painter, const QRectF& target) override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    void changed();
    Layout computeLayout(const QRectF& target) const;
    double timeToX(const Layout& layout, double t) const;
    double xToTime(const Layout& layout, double x) const;
    /// The number of the last tick of the time axis (ticks run from 0 to it).
    static int tickCount(const Layout& layout);
    /// `text` in `font`, elided to `band`'s width and centred in it.
    Text centredText(TextKind kind, const QFont& font, const QString& text,
                     const QRectF& band) const;

    // The steps of texts(), in drawing order.
    void appendFigures(const Layout& layout, std::vector<Text>& out) const;
    void appendTickLabels(const Layout& layout, std::vector<Text>& out) const;
    void appendRowLabels(const Layout& layout, std::vector<Text>& out) const;
    void appendAxisTitles(const Layout& layout, std::vector<Text>& out) const;
    void appendLegend(const Layout& layout, std::vector<Text>& out) const;
    void appendBoxLabels(const Layout& layout, std::vector<Text>& out) const;
    void appendOverlappedLabels(const Layout& layout, std::size_t index,
                                std::vector<Text>& out) const;
    /// The hue a chunk's passes are drawn in (DualPipe's chunk 1 skips W's orange).
    int hueOf(int chunk) const;
    /// The colour an event adds to a pooled pixel.
    QColor fillOf(const core::PipelineEvent& e) const;

    // The steps of render(), in drawing order.
    void drawGrid(QPainter& painter, const Layout& layout) const;
    /// The rows: hatched idle time under the boxes (one by one, or pooled into pixel strips).
    void drawRows(QPainter& painter, const Layout& layout, const QRectF& target);
    void drawBoxes(QPainter& painter, const Layout& layout);
    void drawPooled(QPainter& painter, const Layout& layout);
    void drawAxes(QPainter& painter, const Layout& layout) const;
    void drawTexts(QPainter& painter, const Layout& layout, const std::vector<Text>& texts);
    void drawFigure(QPainter& painter, const Text& text, const QFont& font);
    void drawAxisTitle(QPainter& painter, const Layout& layout, const Text& text,
                       const QFont& font);
    void drawBoxLabel(QPainter& painter, const Text& text, const QFont& font);
    /// `text` laid out once in `font` and kept (m_laidOut).
    const QStaticText& staticText(const QString& text, const QFont& font);
    /// `text` centred in `rect`, from the kept layout.
    void drawCentred(QPainter& painter, const QRectF& rect, const QString& text, const QFont& font);
    void drawLegend(QPainter& painter, const Layout& layout, const std::vector<Text>& texts);

    QString m_title, m_xTitle, m_yTitle, m_timeUnit;
    QStringList m_figures;
    std::vector<core::PipelineEvent> m_events;
    std::vector<std::size_t> m_rowBegin; ///< first event of each stage, plus the end
    int m_stages = 0;
    int m_chunks = 1;
    bool m_split = false; ///< the schedule has W passes: F, B and W are labelled by letter
    bool m_overlapped = false; ///< the schedule has F&B passes
    QStringList m_rowLabels;
    double m_makespan = 0.0;
    QImage m_strip; ///< pooled rows, for the size last drawn
    QSize m_stripFor;
    std::vector<float> m_coverage; ///< premultiplied colour and coverage per pixel, reused
    ByFont<QStaticText> m_laidOut; ///< texts laid out once, drawn from then on
    mutable TextWidths m_widths;
    std::uint64_t m_generation = 0; ///< counts changes: what a kept layout was worked out for
    struct KeptLayout {
        QRectF target;
        std::uint64_t generation = ~std::uint64_t{0};
        QFont font; ///< chart type follows the application font (projector mode)
        Layout layout;
    };
    mutable KeptLayout m_kept;
    QImage m_screen; ///< the chart as last drawn on screen
    bool m_screenDirty = true; ///< m_screen is not the chart as it is now
    bool m_paintedSinceChange = false; ///< painted on screen since the last change
};

} // namespace scalelab::ui
