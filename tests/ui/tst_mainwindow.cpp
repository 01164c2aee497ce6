// The main window: tabs, menus, settings and exports from the File menu's code path.

#include "common/chartpanel.h"
#include "common/parametercontrol.h"
#include "mainwindow.h"
#include "tabs/memorytab.h"
#include "tabs/tabs.h"

#include <QAction>
#include <QImage>
#include <QMenuBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace scalelab;

class TstMainWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("ScaleLabTest");
        QCoreApplication::setApplicationName("tst_mainwindow");
        QSettings().clear();
    }

    void oneTabPerBuiltTopicAndTheMenus()
    {
        app::MainWindow w{core::Scenario{}};
        QCOMPARE(w.tabs().size(), ui::tabNames().size());
        for (int i = 0; i < w.tabs().size(); ++i)
            QCOMPARE(w.tabs()[i]->name(), ui::tabNames()[i]);
        QStringList actions;
        for (QAction* menu : w.menuBar()->actions())
            for (QAction* a : menu->menu()->actions())
                if (!a->isSeparator())
                    actions << a->text().remove('&');
        for (const char* expected : {"Export current chart...", "Export all charts...", "Quit",
                                     "Full screen", "About ScaleLab"})
            QVERIFY2(actions.contains(expected), qPrintable(expected));
    }

    void sliderEditsReachTheWindowsScenario()
    {
        app::MainWindow w{core::Scenario{}};
        auto* memory = qobject_cast<ui::MemoryTab*>(w.tabs().first());
        memory->control("memory.layers")->setValue(40);
        QCOMPARE(w.scenario().memory.layers, std::int64_t(40));
    }

    void geometryAndTabComeBack()
    {
        {
            app::MainWindow w{core::Scenario{}};
            w.resize(1234, 777);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.close();
        }
        app::MainWindow again{core::Scenario{}};
        QCOMPARE(again.size(), QSize(1234, 777));
        QCOMPARE(QSettings().value("window/tab").toString(), QString("memory"));
    }

    void exportsFromTheWindow()
    {
        app::MainWindow w{core::Scenario{}};
        QTemporaryDir dir;
        QCOMPARE(w.exportCurrentChart(dir.filePath("one.png")), QString());
        QCOMPARE(QImage(dir.filePath("one.png")).size(), QSize(1600, 1000));
        QVERIFY(!w.exportCurrentChart(dir.filePath("one.gif")).isEmpty());
        QStringList written;
        QCOMPARE(w.exportAllCharts(dir.path(), &written), QString());
        QCOMPARE(written.size(), 3 * 2); // two memory charts in three formats
        for (const QString& path : written)
            QVERIFY(QFileInfo(path).size() > 1000);
    }
};

QTEST_MAIN(TstMainWindow)
#include "tst_mainwindow.moc"
