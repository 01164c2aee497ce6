// The one export path: PNG, SVG and PDF at the requested size, all or nothing.

#include "chartexport.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "memorytab.h"
#include "testhelpers.h"

#include <QBarCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFile>
#include <QFontMetricsF>
#include <QGraphicsItemGroup>
#include <QGraphicsLayout>
#include <QGraphicsLineItem>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QImage>
#include <QLineSeries>
#include <QPainter>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

using namespace scalelab::ui;
using namespace scalelab::test;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString describe(const QRectF& r)
{
    return QString("(%1,%2 %3x%4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

/// Pixels of `rect` in `image` that are not the white background.
int inkIn(const QImage& image, const QRect& rect)
{
    int ink = 0;
    const QRect r = rect.intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
            ink += image.pixelColor(x, y) != QColor(Qt::white) ? 1 : 0;
    return ink;
}

/// `tab` shown at 1400 x 900 with its figures drawn; false when the window never showed.
bool showDrawn(Tab& tab)
{
    tab.resize(1400, 900);
    tab.show();
    if (!QTest::qWaitForWindowExposed(&tab))
        return false;
    tab.waitForIdle();
    return true;
}

} // namespace

class TstChartExport : public QObject {
    Q_OBJECT

private slots:
    void formats_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QSize>("size");
        QTest::newRow("png 1600x1000") << "png" << QSize(1600, 1000);
        QTest::newRow("png 800x600") << "png" << QSize(800, 600);
        QTest::newRow("svg") << "svg" << QSize(1600, 1000);
        QTest::newRow("pdf") << "pdf" << QSize(1600, 1000);
    }

    void formats()
    {
        QFETCH(QString, format);
        QFETCH(QSize, size);
        MemoryTab tab; // never shown: export must lay the chart out itself
        QTemporaryDir dir;
        for (ChartPanel* chart : tab.charts()) {
            const QString path = dir.filePath(chart->name() + '.' + format);
            QCOMPARE(exportCharts({ExportJob{chart, path, *imageFormatFromName(format), size}}),
                     QString());
            const QByteArray bytes = readAll(path);
            QVERIFY2(bytes.size() > 1000, qPrintable(path));
            if (format == "png") {
                const QImage image(path);
                QCOMPARE(image.size(), size);
                const QSizeF span = drawnSpan(image);
                QVERIFY2(span.width() > 0.9 && span.height() > 0.9,
                         qPrintable(QString("%1 x %2").arg(span.width()).arg(span.height())));
            } else if (format == "svg") {
                QVERIFY(bytes.contains(QString("viewBox=\"0 0 %1 %2\"")
                                           .arg(size.width())
                                           .arg(size.height())
                                           .toUtf8()));
                QVERIFY(bytes.contains("What one accelerator holds")
                        || bytes.contains("Checkpointing"));
            } else {
                QVERIFY(bytes.startsWith("%PDF"));
                // One page of exactly the requested size, in points ("1600.000000").
                const QRegularExpression box(QString("/MediaBox \\[0 0 %1(\\.0+)? %2(\\.0+)?\\]")
                                                 .arg(size.width())
                                                 .arg(size.height()));
                QVERIFY(box.match(QString::fromLatin1(bytes)).hasMatch());
            }
        }
    }

    void typeGrowsWithTheImage()
    {
        // Between 720 and 1000 px wide, laid out at the image's size; wider, a 1000-wide
        // layout scaled up (type grows with the image); narrower, a 720-wide layout scaled
        // down (a chart keeps room for its texts: half a slide, 480 x 300, is 720 x 450 drawn
        // at two thirds).
        QCOMPARE(exportLayoutSize(QSize(1000, 600)), QSizeF(1000, 600));
        QCOMPARE(exportLayoutSize(QSize(800, 500)), QSizeF(800, 500));
        QCOMPARE(exportLayoutSize(QSize(1600, 1000)), QSizeF(1000, 625));
        QCOMPARE(exportLayoutSize(QSize(480, 300)), QSizeF(720, 450));
        QCOMPARE(exportLayoutSize(QSize(400, 300)), QSizeF(720, 540));
    }

    void captionsWrapInABandUnderThePlot_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<int>("repeats");
        // One caption as the window writes it, and one three times as long (several lines
        // even on a slide).
        QTest::newRow("1600x1000") << QSize(1600, 1000) << 1;
        QTest::newRow("1600x1000 long") << QSize(1600, 1000) << 3;
        QTest::newRow("480x300") << QSize(480, 300) << 1;
        QTest::newRow("480x300 long") << QSize(480, 300) << 3;
    }

    void captionsWrapInABandUnderThePlot()
    {
        QFETCH(QSize, size);
        QFETCH(int, repeats);
        MemoryTab tab;
        QStringList parts;
        for (int i = 0; i < repeats; ++i)
            parts << tab.caption();
        const QString caption = parts.join(' ');
        for (ChartPanel* panel : tab.charts()) {
            auto* view = qobject_cast<ChartViewPanel*>(panel);
            QVERIFY(view);
            QImage image(size, QImage::Format_ARGB32_Premultiplied);
            image.fill(Qt::white);
            const ExportLayout layout = exportLayout(size, caption, &image);
            const QRectF canvas(QPointF(0, 0), exportLayoutSize(size));
            QVERIFY(!layout.band.isEmpty());
            // The caption's lines: inside the canvas, inside the band, wrapped to its width.
            QVERIFY2(canvas.contains(layout.captionText), qPrintable(describe(layout.captionText)));
            QVERIFY(layout.band.contains(layout.captionText));
            QVERIFY(layout.captionText.height()
                    > QFontMetricsF(layout.captionFont, &image).height());
            QCOMPARE(layout.chart.bottom(), layout.band.top());
            QVERIFY(layout.captionFont.pointSizeF() >= kMinCaptionPoints);
            // The chart laid out at its rectangle: its plot ends above the caption.
            {
                QPainter painter(&image);
                paintChart(painter, *panel, size, caption);
            }
            QChart* chart = view->chart();
            const QRectF onScreen = chart->geometry();
            chart->setGeometry(QRectF(QPointF(0, 0), layout.chart.size()));
            chart->layout()->activate();
            const QRectF plot = chart->plotArea().translated(layout.chart.topLeft());
            chart->setGeometry(onScreen);
            QVERIFY2(plot.bottom() <= layout.band.top() && !plot.intersects(layout.captionText),
                     qPrintable(describe(plot) + " / " + describe(layout.captionText)));
            // And in the pixels: ink in the caption's lines, none on the canvas's last rows
            // (a cut line would leave some there).
            const double scale = size.width() / canvas.width();
            const QRect text =
                QRectF(layout.captionText.topLeft() * scale, layout.captionText.size() * scale)
                    .toAlignedRect();
            QVERIFY(inkIn(image, text) > 0);
            QCOMPARE(inkIn(image, QRect(0, size.height() - 2, size.width(), 2)), 0);
        }
    }

    void aVectorExportLeavesOutTextsDrawnInNoColour()
    {
        // An axis whose labels only hold room (hideAxisLabels: the FP8 grid chart draws its row
        // names beside the rows itself) is drawn without them: in an SVG they would be text,
        // found twice by a search and copied twice. Drawn labels stay.
        ChartViewPanel panel("test");
        QChart* chart = panel.chart();
        auto* series = new QLineSeries;
        series->append(0, 0);
        series->append(1, 1);
        chart->addSeries(series);
        auto* held = new QBarCategoryAxis;
        held->append(QStringList{"Heldroomname"});
        auto* shown = new QValueAxis;
        chart->addAxis(held, Qt::AlignLeft);
        chart->addAxis(shown, Qt::AlignBottom);
        series->attachAxis(held);
        series->attachAxis(shown);
        styleAxis(held, "Rows");
        styleAxis(shown, "Drawnaxistitle");
        hideAxisLabels(held);
        panel.resize(800, 500);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QGraphicsTextItem* label = nullptr;
        for (QGraphicsItem* item : chart->scene()->items())
            if (auto* text = dynamic_cast<QGraphicsTextItem*>(item);
                text && text->toPlainText() == "Heldroomname" && text->isVisible())
                label = text;
        QVERIFY(label); // in the window's scene, holding room
        QTemporaryDir dir;
        const QString path = dir.filePath("held.svg");
        QCOMPARE(exportCharts({ExportJob{&panel, path, ImageFormat::Svg, {800, 500}}}), QString());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(file.readAll());
        QVERIFY(svg.contains("Drawnaxistitle"));
        QVERIFY(svg.contains("Rows"));
        QVERIFY(!svg.contains("Heldroomname"));
        // And back in the window's own scene after the export.
        QVERIFY(label->isVisible());
    }

    void cachedAxisLinesPaintTheSamePixels()
    {
        // The axes' lines kept as pictures (cacheAxisItems) are drawn as they would be without,
        // pixel for pixel, after a new size and new figures too: the window looks the same, a
        // repaint is cheaper.
        MemoryTab tab;
        QVERIFY(showDrawn(tab));
        // Another size after the first, and new figures: the axes lay out their lines again.
        tab.resize(1200, 800);
        tab.waitForIdle();
        tab.control("memory.parameters")->setValue(70e9);
        tab.waitForIdle();
        QTest::qWait(50);
        auto* panel = qobject_cast<ChartViewPanel*>(tab.charts().constFirst());
        QVERIFY(panel);
        QList<QGraphicsItem*> items; // the axes' lines, in Qt Charts' item groups
        for (QGraphicsItem* item : panel->chart()->scene()->items())
            if (item->parentItem() && item->parentItem()->type() == QGraphicsItemGroup::Type
                && item->type() == QGraphicsLineItem::Type)
                items << item;
        QVERIFY(items.size() > 10);
        for (QGraphicsItem* item : items) // the tab's refresh and layout cached them
            QCOMPARE(item->cacheMode(), QGraphicsItem::DeviceCoordinateCache);
        panel->view()->grab(); // the pictures made
        const QImage cached = panel->view()->grab().toImage();
        for (QGraphicsItem* item : items)
            item->setCacheMode(QGraphicsItem::NoCache);
        const QImage drawn = panel->view()->grab().toImage();
        QCOMPARE(cached.size(), drawn.size());
        QCOMPARE(cached, drawn); // pixel for pixel
    }

    void aVectorExportDrawsCachedAxisLinesAsLines()
    {
        // The pictures are the screen's: an SVG gets the axes as lines, as before, and the window
        // keeps its pictures after the export.
        MemoryTab tab;
        QVERIFY(showDrawn(tab));
        auto* panel = qobject_cast<ChartViewPanel*>(tab.charts().constFirst());
        QVERIFY(panel);
        QTemporaryDir dir;
        const QString path = dir.filePath("axes.svg");
        QCOMPARE(exportCharts({ExportJob{panel, path, ImageFormat::Svg, {1600, 1000}}}), QString());
        const QByteArray svg = readAll(path);
        QVERIFY(!svg.contains("<image"));
        int cached = 0;
        for (QGraphicsItem* item : panel->chart()->scene()->items())
            cached += item->cacheMode() == QGraphicsItem::DeviceCoordinateCache ? 1 : 0;
        QVERIFY(cached > 10);
    }

    void anUnwritableFolderLeavesNothing()
    {
        MemoryTab tab;
        QTemporaryDir dir;
        // A regular file where a folder should be: nothing can be written below it, even as
        // root.
        QFile blocker(dir.filePath("not-a-folder"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        const QString path = dir.filePath("not-a-folder/memory-budget.png");
        const QString error =
            exportCharts({ExportJob{tab.charts().first(), path, ImageFormat::Png, {800, 500}}});
        QVERIFY(error.startsWith("cannot write " + path));
        QVERIFY(!QFile::exists(path));
    }

    void aFailureLeavesEarlierFilesUntouched()
    {
        MemoryTab tab;
        QTemporaryDir dir;
        const QString first = dir.filePath("memory-budget.png");
        QFile old(first);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("old");
        old.close();
        // The second target is a folder, so it cannot be written: the first must not change.
        const QString second = dir.filePath("memory-checkpointing.png");
        QVERIFY(QDir().mkdir(second));
        const QString error =
            exportCharts({ExportJob{tab.charts()[0], first, ImageFormat::Png, {800, 500}},
                          ExportJob{tab.charts()[1], second, ImageFormat::Png, {800, 500}}});
        QVERIFY(!error.isEmpty());
        QCOMPARE(readAll(first), QByteArray("old"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"memory-budget.png"});
    }
};

QTEST_MAIN(TstChartExport)
#include "tst_chartexport.moc"
