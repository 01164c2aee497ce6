#pragma once

// Every text a widget draws, where, and whether it is drawn whole: a paint device whose
// engine keeps the texts it is asked to draw and draws nothing. A test renders a widget (or a
// chart export) on it and judges what a reader would see: a text shortened to "...", a text
// running past the widget's edge or its painter's clip (a label too short for its lines, a
// choice box narrower than its choice), two texts drawn over each other.

#include <QFontMetricsF>
#include <QGuiApplication>
#include <QList>
#include <QPaintDevice>
#include <QPaintEngine>
#include <QPainter>
#include <QRectF>
#include <QScreen>
#include <QString>
#include <QTransform>
#include <QWidget>
#include <algorithm>
#include <cmath>

namespace scalelab::test {

/// One text as drawn: its words, its line's box and its glyphs' box in device pixels, and the
/// part of it the painter's clip let through (equal to `box` when nothing was clipped).
struct DrawnText {
    QString text;
    QRectF box;
    QRectF ink;
    QRectF shown;
};

class TextRecordingEngine : public QPaintEngine {
public:
    TextRecordingEngine()
        : QPaintEngine(QPaintEngine::AllFeatures)
    {
    }

    QList<DrawnText> texts;

    bool begin(QPaintDevice*) override { return true; }
    bool end() override { return true; }
    void updateState(const QPaintEngineState&) override { }
    Type type() const override { return QPaintEngine::User; }
    void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override { }
    void drawImage(const QRectF&, const QImage&, const QRectF&, Qt::ImageConversionFlags) override
    {
    }
    void drawTiledPixmap(const QRectF&, const QPixmap&, const QPointF&) override { }
    void drawPath(const QPainterPath&) override { }
    void drawPolygon(const QPointF*, int, PolygonDrawMode) override { }
    void drawPolygon(const QPoint*, int, PolygonDrawMode) override { }
    void drawRects(const QRectF*, int) override { }
    void drawRects(const QRect*, int) override { }
    void drawLines(const QLineF*, int) override { }
    void drawLines(const QLine*, int) override { }
    void drawEllipse(const QRectF&) override { }
    void drawPoints(const QPointF*, int) override { }

    void drawTextItem(const QPointF& baseline, const QTextItem& item) override
    {
        const QString text = item.text();
        // A text drawn in no colour holds room for another drawn there (hideAxisLabels).
        if (text.trimmed().isEmpty() || painter()->pen().color().alpha() == 0)
            return;
        const QFontMetricsF metrics(item.font(), paintDevice());
        // The line's box from the baseline, in the painter's coordinates, then on the device.
        const QRectF box(baseline.x(), baseline.y() - metrics.ascent(), item.width(),
                         metrics.ascent() + metrics.descent());
        const QRectF ink = metrics.tightBoundingRect(text).translated(baseline);
        QRectF shown = box;
        if (painter()->hasClipping())
            shown = box.intersected(painter()->clipBoundingRect());
        const QTransform toDevice = painter()->combinedTransform();
        texts.append({text, toDevice.mapRect(box), toDevice.mapRect(ink), toDevice.mapRect(shown)});
    }
};

/// A device of `size` logical pixels at the screen's resolution, so fonts measure as on screen.
class TextRecorder : public QPaintDevice {
public:
    explicit TextRecorder(QSize size)
        : m_size(size)
    {
    }

    QPaintEngine* paintEngine() const override { return &m_engine; }
    const QList<DrawnText>& texts() const { return m_engine.texts; }

protected:
    int metric(PaintDeviceMetric metric) const override
    {
        const QScreen* screen = QGuiApplication::primaryScreen();
        switch (metric) {
        case PdmWidth:
            return m_size.width();
        case PdmHeight:
            return m_size.height();
        case PdmDpiX:
        case PdmPhysicalDpiX:
            return qRound(screen->logicalDotsPerInchX());
        case PdmDpiY:
        case PdmPhysicalDpiY:
            return qRound(screen->logicalDotsPerInchY());
        case PdmWidthMM:
            return qRound(m_size.width() * 25.4 / screen->logicalDotsPerInchX());
        case PdmHeightMM:
            return qRound(m_size.height() * 25.4 / screen->logicalDotsPerInchY());
        case PdmNumColors:
            return 1 << 24;
        case PdmDepth:
            return 32;
        case PdmDevicePixelRatio:
            return 1;
        case PdmDevicePixelRatioScaled:
            return static_cast<int>(devicePixelRatioFScale());
        default:
            return QPaintDevice::metric(metric);
        }
    }

private:
    QSize m_size;
    mutable TextRecordingEngine m_engine;
};

inline bool cutShort(const QString& text)
{
    return text.trimmed().endsWith("...") || text.contains(QChar(0x2026));
}

/// How texts are judged on a device.
struct TextRules {
    /// Texts that end in "..." by design (a button that opens a dialog, "Save as...").
    QStringList meant;
    /// The device is a scroll area's viewport: a text whose line or glyphs cross its edge is
    /// scrolled part way into view, not cut, and only texts wholly inside are judged for
    /// clipping.
    bool scrolls = false;
};

/// What is wrong with texts drawn on a device of `area`: shortened, cut by a clip or the edge,
/// or drawn over each other. `where` names the drawing in each line.
inline QStringList problemsOfTexts(const QList<DrawnText>& texts, const QRectF& area,
                                   const QString& where, const TextRules& rules = {})
{
    QStringList problems;
    const QRectF inside = area.adjusted(-1, -1, 1, 1);
    for (qsizetype i = 0; i < texts.size(); ++i) {
        const DrawnText& t = texts[i];
        const bool meant = std::any_of(rules.meant.begin(), rules.meant.end(),
                                       [&t](const QString& m) { return m.endsWith(t.text); });
        if (cutShort(t.text) && !meant)
            problems << QString("%1: \"%2\" is cut short").arg(where, t.text);
        // Scrolled part way into view: the line's box or its glyphs (an italic's descender
        // can reach below its line) cross the viewport's edge.
        if (rules.scrolls && !(inside.contains(t.box) && inside.contains(t.ink)))
            continue;
        // A pixel either way is rounding, not a cut a reader sees.
        const bool clipped =
            t.shown.width() < t.box.width() - 2 || t.shown.height() < t.box.height() - 2;
        if (!inside.contains(t.ink) || clipped)
            problems << QString("%1: \"%2\" is cut at an edge").arg(where, t.text);
        for (qsizetype j = i + 1; j < texts.size(); ++j) {
            // Two runs of one line (a word drawn in pieces, a glyph overhanging the next
            // piece, as "f" over "i"): one's box ends where the other's begins.
            const QRectF& a = t.box;
            const QRectF& b = texts[j].box;
            const bool oneLine = std::abs(a.bottom() - b.bottom()) < 1
                && (std::abs(a.right() - b.left()) < 2 || std::abs(b.right() - a.left()) < 2);
            if (oneLine)
                continue;
            const QRectF both = t.ink.intersected(texts[j].ink);
            if (both.width() > 2 && both.height() > 2)
                problems << QString("%1: \"%2\" overlaps \"%3\"").arg(where, t.text, texts[j].text);
        }
    }
    return problems;
}

/// The texts `widget` itself draws (not its children) at its present size, judged.
inline QStringList problemsOfWidget(QWidget* widget, const QString& where,
                                    const TextRules& rules = {})
{
    TextRecorder recorder(widget->size());
    widget->render(&recorder, QPoint(), QRegion(), QWidget::RenderFlags());
    return problemsOfTexts(recorder.texts(), QRectF(QPointF(), widget->size()), where, rules);
}

} // namespace scalelab::test
