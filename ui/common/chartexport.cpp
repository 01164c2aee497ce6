#include "chartexport.h"

#include "chartpanel.h"
#include "chartstyle.h"

#include <QBuffer>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextLayout>
#include <QTextOption>
#include <algorithm>
#include <memory>
#include <vector>

namespace scalelab::ui {

namespace {

/// Writes every byte, or returns why not. A short write is not an error in itself: the next
/// write then fails with the reason (a full disk, a file-size limit).
QString writeAll(QSaveFile& file, const QByteArray& bytes)
{
    qint64 done = 0;
    while (done < bytes.size()) {
        const qint64 n = file.write(bytes.constData() + done, bytes.size() - done);
        if (n <= 0)
            return file.errorString();
        done += n;
    }
    if (!file.flush())
        return file.errorString();
    return {};
}

QString render(const ExportJob& job, QSaveFile& file)
{
    switch (job.format) {
    case ImageFormat::Png: {
        QImage image(job.size, QImage::Format_ARGB32_Premultiplied);
        image.fill(chartBackgroundColor());
        {
            QPainter painter(&image);
            paintChart(painter, *job.panel, job.size, job.caption);
        }
        // Encoded in memory first: the encoder's own messages never reach the terminal, and a
        // write that fails (a full disk) is told once, by the file, with its reason.
        QByteArray png;
        QBuffer buffer(&png);
        if (!buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG"))
            return "cannot encode the PNG image";
        return writeAll(file, png);
    }
    case ImageFormat::Svg: {
        QSvgGenerator svg;
        svg.setOutputDevice(&file);
        svg.setSize(job.size);
        svg.setViewBox(QRect(QPoint(0, 0), job.size));
        svg.setTitle(job.panel->name());
        svg.setDescription("Exported by ScaleLab");
        QPainter painter;
        if (!painter.begin(&svg))
            return "cannot start the SVG drawing";
        painter.fillRect(QRect(QPoint(0, 0), job.size), chartBackgroundColor());
        paintChart(painter, *job.panel, job.size, job.caption);
        painter.end();
        return {};
    }
    case ImageFormat::Pdf: {
        // One page exactly the requested size, one point per pixel.
        QPdfWriter pdf(&file);
        pdf.setResolution(72);
        pdf.setPageSize(
            QPageSize(QSizeF(job.size), QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setTitle(job.panel->name());
        pdf.setCreator("ScaleLab");
        QPainter painter;
        if (!painter.begin(&pdf))
            return "cannot start the PDF drawing";
        paintChart(painter, *job.panel, job.size, job.caption);
        painter.end();
        return {};
    }
    }
    return "unknown format";
}

} // namespace

namespace {

constexpr double kCaptionMargin = 8; // around the caption's lines, in layout units
constexpr double kCaptionShare = 1.0 / 3; // of the height a caption may take at full size
constexpr double kCaptionShrink = 0.9; // each smaller try

/// `text` broken into lines of at most `width`: between words, or inside a word longer than a
/// line, so nothing runs past the edge. Line positions start at (0, 0).
void wrapCaption(QTextLayout& layout, qreal width)
{
    QTextOption option(Qt::AlignLeft);
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    layout.setTextOption(option);
    layout.beginLayout();
    qreal y = 0;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        line.setPosition(QPointF(0, y));
        y += line.height();
    }
    layout.endLayout();
}

} // namespace

ExportLayout exportLayout(const QSize& pixels, const QString& caption, QPaintDevice* device)
{
    const QSizeF size = exportLayoutSize(pixels);
    ExportLayout out;
    out.chart = QRectF(QPointF(0, 0), size);
    if (caption.isEmpty())
        return out;
    const qreal width = std::max(1.0, size.width() - 2 * kCaptionMargin);
    QFont font = chartFonts().annotation;
    QRectF text;
    for (;;) {
        QTextLayout layout(caption, font, device);
        wrapCaption(layout, width);
        text = layout.boundingRect();
        const qreal band = text.height() + 2 * kCaptionMargin;
        const qreal points = font.pointSizeF();
        if (band <= size.height() * kCaptionShare || points <= kMinCaptionPoints)
            break;
        font.setPointSizeF(std::max(kMinCaptionPoints, points * kCaptionShrink));
    }
    const qreal bandHeight = std::min(size.height(), text.height() + 2 * kCaptionMargin);
    out.band = QRectF(0, size.height() - bandHeight, size.width(), bandHeight);
    out.captionText = QRectF(kCaptionMargin, out.band.top() + kCaptionMargin,
                             std::min(width, text.width()), text.height());
    out.captionFont = font;
    out.chart.setBottom(out.band.top());
    return out;
}

void paintChart(QPainter& painter, ChartPanel& panel, const QSize& pixels, const QString& caption)
{
    const QSizeF size = exportLayoutSize(pixels);
    const ExportLayout layout = exportLayout(pixels, caption, painter.device());
    painter.save();
    painter.scale(pixels.width() / size.width(), pixels.height() / size.height());
    if (!caption.isEmpty()) {
        // The caption has its own band at the bottom; the chart is laid out above it.
        QTextLayout text(caption, layout.captionFont, painter.device());
        wrapCaption(text, layout.band.width() - 2 * kCaptionMargin);
        painter.setPen(chartTextColor());
        text.draw(&painter, layout.captionText.topLeft());
    }
    panel.render(painter, layout.chart);
    painter.restore();
}

std::optional<ImageFormat> imageFormatFromName(const QString& name)
{
    if (name == "png")
        return ImageFormat::Png;
    if (name == "svg")
        return ImageFormat::Svg;
    if (name == "pdf")
        return ImageFormat::Pdf;
    return std::nullopt;
}

QString imageFormatName(ImageFormat format)
{
    switch (format) {
    case ImageFormat::Png:
        return "png";
    case ImageFormat::Svg:
        return "svg";
    case ImageFormat::Pdf:
        return "pdf";
    }
    return {};
}

QSizeF exportLayoutSize(const QSize& pixels)
{
    // Wide images are laid out at kWidestLayout and scaled up; narrow ones at kNarrowestLayout
    // and scaled down, so a chart never has less room than its titles, ticks and legend need.
    const qreal width =
        std::clamp(static_cast<qreal>(pixels.width()), kNarrowestLayout, kWidestLayout);
    const qreal scale = pixels.width() / width;
    return QSizeF(pixels.width() / scale, pixels.height() / scale);
}

QString exportCharts(const QList<ExportJob>& jobs, const QList<ExportFile>& extra)
{
    std::vector<std::unique_ptr<QSaveFile>> files;
    QStringList paths;
    for (const ExportJob& job : jobs) {
        auto file = std::make_unique<QSaveFile>(job.path);
        if (!file->open(QIODevice::WriteOnly))
            return "cannot write " + job.path + ": " + file->errorString();
        const QString problem = render(job, *file);
        if (!problem.isEmpty())
            return "cannot write " + job.path + ": " + problem;
        if (file->error() != QFileDevice::NoError)
            return "cannot write " + job.path + ": " + file->errorString();
        files.push_back(std::move(file));
        paths << job.path;
    }
    for (const ExportFile& e : extra) {
        auto file = std::make_unique<QSaveFile>(e.path);
        if (!file->open(QIODevice::WriteOnly))
            return "cannot write " + e.path + ": " + file->errorString();
        if (const QString problem = writeAll(*file, e.bytes); !problem.isEmpty())
            return "cannot write " + e.path + ": " + problem;
        files.push_back(std::move(file));
        paths << e.path;
    }
    // Every file rendered: now make them visible. Unsaved QSaveFiles discard their temporaries.
    for (std::size_t i = 0; i < files.size(); ++i)
        if (!files[i]->commit())
            return "cannot write " + paths.at(static_cast<qsizetype>(i)) + ": "
                + files[i]->errorString();
    return {};
}

} // namespace scalelab::ui
