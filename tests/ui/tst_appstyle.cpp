#include "appstyle.h"

#include <QDir>
#include <QFile>
#include <QGroupBox>
#include <QLabel>
#include <QLibraryInfo>
#include <QMainWindow>
#include <QMenuBar>
#include <QStyleFactory>
#include <QVBoxLayout>
#include <QtTest>
#include <memory>

using namespace scalelab::ui;

namespace {

/// The plugin files of `kind` (imageformats, iconengines) the process has loaded.
QStringList loadedPlugins(const QString& kind)
{
    QFile maps("/proc/self/maps");
    if (!maps.open(QIODevice::ReadOnly))
        return {"cannot read /proc/self/maps"};
    QStringList loaded;
    for (const QByteArray& line : maps.readAll().split('\n'))
        if (line.contains(("/" + kind + "/").toUtf8()))
            loaded << QString::fromUtf8(line.mid(line.lastIndexOf(' ') + 1));
    loaded.removeDuplicates();
    return loaded;
}

/// The first row, from the top, where column `x` of `image` is not the colour of its top pixel.
int firstDrawnRow(const QImage& image, int x)
{
    const QRgb background = image.pixel(x, 0);
    for (int y = 1; y < image.height(); ++y)
        if (image.pixel(x, y) != background)
            return y;
    return -1;
}

/// A group box of 240 x 120 drawn in `style` (its title, if any, short and on the left).
QImage drawnGroupBox(QStyle* style, const QString& title)
{
    QGroupBox box(title);
    box.setStyle(style);
    box.resize(240, 120);
    return box.grab().toImage();
}

} // namespace

class TestAppStyle : public QObject {
    Q_OBJECT

private slots:
    void theFirstWindowLoadsNoImagePlugin();
    void groupBoxFramesSitWhereFusionPutsThem();
    void anSvgIconDrawsAtAnySize();
};

void TestAppStyle::theFirstWindowLoadsNoImagePlugin()
{
    // Runs first: nothing in this process has read an image yet.
    const QDir formats(QLibraryInfo::path(QLibraryInfo::PluginsPath) + "/imageformats");
    if (formats.entryList(QDir::Files).isEmpty())
        QSKIP("no image-format plugin installed: none could be loaded either way");
    QVERIFY(loadedPlugins("imageformats").isEmpty());
    installAppStyle();
    QMainWindow window;
    window.menuBar()->addMenu("&File");
    auto* box = new QGroupBox("Controls");
    (new QVBoxLayout(box))->addWidget(new QLabel("a slider here"));
    window.setCentralWidget(box);
    window.setWindowIcon(svgIcon(QFINDTESTDATA("../../resources/icons/scalelab.svg")));
    window.resize(400, 300);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QImage drawn = window.grab().toImage();
    QVERIFY(!drawn.isNull());
    QCOMPARE(loadedPlugins("imageformats"), QStringList());
    QCOMPARE(loadedPlugins("iconengines"), QStringList());
}

void TestAppStyle::groupBoxFramesSitWhereFusionPutsThem()
{
    const std::unique_ptr<QStyle> fusion(QStyleFactory::create("Fusion"));
    QVERIFY(fusion);
    AppStyle ours; // wraps the application's style, Fusion under the offscreen platform
    QCOMPARE(ours.baseStyle()->name().toLower(), QString("fusion"));
    const int middle = 120; // right of the title
    for (const QString& title : {QString("Controls"), QString()}) {
        const QImage theirs = drawnGroupBox(fusion.get(), title);
        const QImage mine = drawnGroupBox(&ours, title);
        const int top = firstDrawnRow(mine, middle);
        QVERIFY2(top > 0, qPrintable(title));
        // Fusion's picture has a soft edge; its line sits within a pixel of ours.
        QVERIFY2(std::abs(firstDrawnRow(theirs, middle) - top) <= 1,
                 qPrintable(QString("%1: %2 against %3")
                                .arg(title)
                                .arg(firstDrawnRow(theirs, middle))
                                .arg(top)));
        // Titled, the frame starts below the title's line; bare, near the top.
        if (title.isEmpty())
            QVERIFY(top <= 4);
        else
            QVERIFY(top >= QFontMetrics(QApplication::font()).height());
        // The frame is closed: its line runs along the bottom row too.
        QVERIFY(mine.pixel(middle, mine.height() - 1) != mine.pixel(middle, 0));
    }
}

void TestAppStyle::anSvgIconDrawsAtAnySize()
{
    const QIcon icon = svgIcon(QFINDTESTDATA("../../resources/icons/scalelab.svg"));
    QVERIFY(!icon.isNull());
    for (const int size : {16, 64, 256}) {
        const QImage image = icon.pixmap(size, size).toImage();
        QCOMPARE(image.size(), QSize(size, size));
        // The logo's blue square behind its ring fills the middle; its rounded corner (a
        // radius of 3/16 of the side) leaves the icon's corner pixel clear.
        QCOMPARE(QColor(image.pixel(size / 2, size / 2)), QColor("#0072B2"));
        if (size >= 64)
            QCOMPARE(qAlpha(image.pixel(0, 0)), 0);
    }
    QVERIFY(svgIcon("/no/such/file.svg").isNull());
}

QTEST_MAIN(TestAppStyle)
#include "tst_appstyle.moc"
