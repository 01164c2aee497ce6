// The one export path: PNG, SVG and PDF at the requested size, all or nothing.

#include "chartexport.h"
#include "chartpanel.h"
#include "memorytab.h"
#include "testhelpers.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace scalelab::ui;
using namespace scalelab::test;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
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
        QCOMPARE(exportLayoutSize(QSize(1000, 600)), QSizeF(1000, 600));
        QCOMPARE(exportLayoutSize(QSize(1600, 1000)), QSizeF(1000, 625));
        QCOMPARE(exportLayoutSize(QSize(400, 300)), QSizeF(400, 300));
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
