#pragma once

#include <QIcon>
#include <QProxyStyle>

namespace scalelab::ui {

/// The application's style: the platform's own (Fusion on a plain Linux desktop), with the two
/// pictures of Fusion's that the first window shows drawn in code instead of read from PNG files:
/// a group box's frame and the menu bar's overflow arrow. Qt reads a PNG named by its file alone
/// after asking every image-format plugin whether it reads "png", so the first group box painted
/// loaded them all (GIF, ICO, JPEG with libjpeg, SVG, and any others installed), none of them
/// needed, about 4 ms of a 95 ms cold start. Under any other base style nothing changes.
class AppStyle : public QProxyStyle {
    Q_OBJECT

public:
    /// Wraps the style the application uses now (the platform's, or the one given by -style).
    AppStyle();

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget = nullptr) const override;
    QIcon standardIcon(StandardPixmap icon, const QStyleOption* option = nullptr,
                       const QWidget* widget = nullptr) const override;

private:
    bool m_drawsFusionPictures;
};

/// Installs AppStyle on the application; call once, after QApplication is made.
void installAppStyle();

/// An icon drawn from the SVG file `path` at whatever size is asked, through Qt SVG directly: no
/// icon-engine plugin is looked for and loaded, as QIcon(path) does for an .svg file.
QIcon svgIcon(const QString& path);

} // namespace scalelab::ui
