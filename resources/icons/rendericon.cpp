// scalelab_rendericon SVG SIZE PNG: draws the SVG icon into a SIZE x SIZE PNG. The build makes the
// hicolor PNGs with it, so the SVG stays the icon's one source.
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgRenderer>
#include <cstdio>

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: scalelab_rendericon SVG SIZE PNG\n");
        return 2;
    }
    // No QGuiApplication: painting shapes into a QImage needs no platform, nor a display.
    const int size = QString::fromLocal8Bit(argv[2]).toInt();
    QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
    if (!svg.isValid() || size < 1 || size > 1024) {
        std::fprintf(stderr, "scalelab_rendericon: cannot draw %s at %s px\n", argv[1], argv[2]);
        return 1;
    }
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    svg.render(&painter, QRectF(0, 0, size, size));
    painter.end();
    QSaveFile file(QString::fromLocal8Bit(argv[3]));
    if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit()) {
        std::fprintf(stderr, "scalelab_rendericon: cannot write %s\n", argv[3]);
        return 1;
    }
    return 0;
}
