#pragma once

#include <QFont>
#include <QList>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <QString>
#include <optional>

namespace scalelab::ui {

class ChartPanel;

enum class ImageFormat { Png, Svg, Pdf };

/// "png", "svg" or "pdf" (lower case); nullopt for anything else.
std::optional<ImageFormat> imageFormatFromName(const QString& name);
QString imageFormatName(ImageFormat format);

/// The widest layout of an export, in layout units: a wider image is this layout scaled up.
constexpr double kWidestLayout = 1000;
/// The narrowest: a narrower image (half a slide, 480 px) is this layout scaled down, rather
/// than a layout too small for the chart's texts, which Qt Charts would shorten to "...".
constexpr double kNarrowestLayout = 720;
/// The logical size a chart is laid out at for an image of `pixels`: wide images are drawn
/// scaled up rather than laid out wider, so type grows with the image and a 1600 px slide reads
/// like the window does (nothing is drawn at a fixed tiny size); narrow ones are drawn scaled
/// down from a layout with room for every text.
QSizeF exportLayoutSize(const QSize& pixels);

struct ExportJob {
    ExportJob() = default;
    ExportJob(ChartPanel* panel_, QString path_, ImageFormat format_, QSize size_ = {1600, 1000},
              QString caption_ = {})
        : panel(panel_)
        , path(std::move(path_))
        , format(format_)
        , size(size_)
        , caption(std::move(caption_))
    {
    }

    ChartPanel* panel = nullptr;
    QString path;
    ImageFormat format = ImageFormat::Png;
    QSize size{1600, 1000};
    /// A line under the chart naming the parameters that produced it; empty for none.
    QString caption;
};

/// Where paintChart puts things in an image of `pixels`, in layout units (exportLayoutSize):
/// the caption's band across the bottom, as high as the caption wrapped to the width needs,
/// the caption's lines inside it, and the chart laid out in the rest above it. A caption that
/// would take more than a third of the height is set smaller (down to kMinCaptionPoints) rather
/// than cut. `device` is the one painted on (font metrics differ between screen, SVG and PDF).
struct ExportLayout {
    QRectF chart;
    QRectF band; ///< empty without a caption
    QRectF captionText; ///< the wrapped caption's lines, inside band
    QFont captionFont;
};
ExportLayout exportLayout(const QSize& pixels, const QString& caption,
                          QPaintDevice* device = nullptr);
/// The smallest type a caption is set in, in points.
inline constexpr double kMinCaptionPoints = 7.0;

/// Draws `panel` into a device of `pixels` (laid out at exportLayoutSize), with the caption
/// under it when there is one. The one drawing routine of every export and of the clipboard.
void paintChart(QPainter& painter, ChartPanel& panel, const QSize& pixels,
                const QString& caption = {});

/// A file written beside the charts (a configuration generated from the inputs).
struct ExportFile {
    QString path;
    QByteArray bytes;
};

/// Renders every job and writes the files, all or none: each is rendered into a QSaveFile, and
/// only when all have rendered are they committed, so a failure leaves no partial file and
/// does not touch files already there. Returns an empty string on success, otherwise one line
/// naming the file and what went wrong.
QString exportCharts(const QList<ExportJob>& jobs, const QList<ExportFile>& files = {});

} // namespace scalelab::ui
