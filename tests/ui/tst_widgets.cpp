// Shared widgets: the background runner and the heatmap painter.

#include "backgroundrunner.h"
#include "chartdata.h"
#include "chartstyle.h"
#include "explanationpanel.h"
#include "figureslabel.h"
#include "format.h"
#include "heatmappairpanel.h"
#include "heatmappanel.h"
#include "legendrows.h"
#include "notelabel.h"
#include "plaincelldelegate.h"
#include "pointcloud.h"
#include "scalelab/core/error.h"
#include "tab.h"
#include "tablepanel.h"
#include "testhelpers.h"

#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHeaderView>
#include <QIcon>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QPixmap>
#include <QProxyStyle>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QScreen>
#include <QSignalSpy>
#include <QStyleFactory>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QThread>
#include <QVBoxLayout>
#include <QValueAxis>
#include <atomic>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

using namespace scalelab::ui;
namespace core = scalelab::core;
namespace ui = scalelab::ui;

namespace {

/// A tab whose computation fails the way `how` says, on the worker thread or at once.
class FailingTab : public ui::Tab {
public:
    enum class How { Fine, NoMemory, OtherException, BadInput, NoMemoryAtOnce };
    How how = How::Fine;

    FailingTab()
        : ui::Tab(nullptr, core::Section::Memory)
    {
    }

    QString title() const override { return QStringLiteral("Failing"); }
    QList<ui::ChartPanel*> charts() const override { return {}; }

protected:
    void recompute() override
    {
        if (how == How::NoMemoryAtOnce)
            throw std::bad_alloc();
        const How mode = how;
        computeInBackground([mode]() -> std::function<void()> {
            if (mode == How::NoMemory)
                throw std::bad_alloc();
            if (mode == How::OtherException)
                throw std::length_error("vector::_M_default_append");
            if (mode == How::BadInput)
                throw core::InputError("failing.size", "a smaller size");
            return [] {
            };
        });
    }
};

} // namespace

class TstWidgets : public QObject {
    Q_OBJECT

    /// A styled chart with one line from x = 0 to `end` on a value axis along the bottom.
    static QChart* lineChart(double end)
    {
        auto* chart = new QChart;
        styleChart(chart);
        auto* series = new QLineSeries;
        series->append(0, 0);
        series->append(end, 1);
        chart->addSeries(series);
        auto* x = new QValueAxis;
        chart->addAxis(x, Qt::AlignBottom);
        series->attachAxis(x);
        return chart;
    }

    /// `view` 1200 x 400 on screen; its chart's bottom axis, or null if it never showed.
    static QValueAxis* shownWithBottomAxis(QChartView& view)
    {
        view.resize(1200, 400);
        view.show();
        if (!QTest::qWaitForWindowExposed(&view))
            return nullptr;
        return qobject_cast<QValueAxis*>(view.chart()->axes(Qt::Horizontal).first());
    }

    /// A styled chart with value axes along the bottom (x) and up the left (y), and a line from
    /// (0, 0) to (1, 1) for each of `names`.
    static QChart* twoAxisChart(const QStringList& names, QValueAxis*& x, QValueAxis*& y)
    {
        auto* chart = new QChart;
        styleChart(chart);
        x = new QValueAxis;
        y = new QValueAxis;
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        for (const QString& name : names) {
            auto* s = new QLineSeries;
            s->setName(name);
            s->append(0, 0);
            s->append(1, 1);
            chart->addSeries(s);
            s->attachAxis(x);
            s->attachAxis(y);
        }
        return chart;
    }

private slots:
    void theFiguresLineKeepsItsTallestHeightAtEachWidth()
    {
        // The FP8 tab's table note gains a paragraph for a preview and loses it when the exact
        // figures follow; the table above it must not shrink and grow back at every key press,
        // though the layout asks the note's height at other widths in between.
        FiguresLabel note;
        const QString shortText = QStringLiteral("One line.");
        QString longText;
        for (int i = 0; i < 12; ++i)
            longText += QStringLiteral("A sentence that wraps onto several lines. ");
        note.setText(shortText);
        const int narrow = 200;
        const int wide = 2000;
        const int shortHeight = note.heightForWidth(narrow);
        note.setText(longText);
        const int longHeight = note.heightForWidth(narrow);
        QVERIFY(longHeight > shortHeight);
        note.setText(shortText);
        QCOMPARE(note.heightForWidth(wide), shortHeight); // one line at either width
        QCOMPARE(note.heightForWidth(narrow), longHeight);
        // Each width on its own: at one never given the long text, the short one's height.
        QLabel plain(shortText);
        plain.setWordWrap(true);
        QCOMPARE(note.heightForWidth(wide), plain.heightForWidth(wide));
        // Another font measures afresh.
        QFont font = note.font();
        font.setPointSizeF(font.pointSizeF() * 2);
        note.setFont(font);
        plain.setFont(font);
        QCOMPARE(note.heightForWidth(narrow), plain.heightForWidth(narrow));
    }

    void aFailedRefreshIsKnownNotLost()
    {
        // Export asks every tab whether its last refresh failed: a computation that ran out of
        // memory once left the charts on the last good inputs and export wrote those, exit 0.
        FailingTab tab;
        const auto refresh = [&tab](FailingTab::How how) {
            tab.how = how;
            tab.refreshNow();
            tab.waitForIdle();
        };
        refresh(FailingTab::How::Fine);
        QCOMPARE(tab.failure(), ui::Tab::Failure::None);
        QCOMPARE(tab.failureMessage(), QString());
        refresh(FailingTab::How::NoMemory);
        QCOMPARE(tab.failure(), ui::Tab::Failure::OutOfResources);
        QVERIFY(tab.failureMessage().contains("memory"));
        refresh(FailingTab::How::Fine);
        QCOMPARE(tab.failure(), ui::Tab::Failure::None);
        refresh(FailingTab::How::OtherException);
        QCOMPARE(tab.failure(), ui::Tab::Failure::OutOfResources);
        QVERIFY(tab.failureMessage().contains("vector::_M_default_append"));
        refresh(FailingTab::How::BadInput);
        QCOMPARE(tab.failure(), ui::Tab::Failure::BadInput);
        QCOMPARE(tab.failureMessage(), QString("failing.size: a smaller size"));
        refresh(FailingTab::How::NoMemoryAtOnce); // on the GUI thread: caught there too
        QCOMPARE(tab.failure(), ui::Tab::Failure::OutOfResources);
    }

    void theHeapGrowsOnceOntoLargePages()
    {
#if defined(__GLIBC__) && defined(__linux__) && !defined(SCALELAB_SANITIZED_HEAP)
        constexpr std::uintptr_t kLargePage = std::uintptr_t{2} << 20;
        constexpr std::size_t kBytes = std::size_t{8} << 20;
        ui::keepFreedMemoryForReuse(); // as main() does first: the top is then never trimmed
        ui::growHeapOnLargePages(kBytes);
        // The top of the heap (what mallinfo2 calls keepcost) holds the bytes asked for.
        const std::size_t top = mallinfo2().keepcost;
        QVERIFY2(top >= kBytes, qPrintable(QString::number(top)));
        const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
        // The top's last whole large page is marked for large pages ("hg").
        const std::uintptr_t probe = (after & ~(kLargePage - 1)) - 1;
        QFile maps("/proc/self/smaps");
        QVERIFY(maps.open(QIODevice::ReadOnly | QIODevice::Text));
        bool inside = false, marked = false, found = false;
        static const QRegularExpression range("^([0-9a-f]+)-([0-9a-f]+) ");
        for (const QByteArray& line : maps.readAll().split('\n')) {
            if (const auto m = range.match(QString::fromLatin1(line)); m.hasMatch()) {
                inside = m.captured(1).toULongLong(nullptr, 16) <= probe
                    && probe < m.captured(2).toULongLong(nullptr, 16);
            } else if (inside && line.startsWith("VmFlags:")) {
                found = true;
                marked = line.contains(" hg");
            }
        }
        QVERIFY(found);
        QVERIFY(marked);
#else
        QSKIP("the heap is grown on large pages with glibc's own heap on Linux only");
#endif
    }

    void onlyTheNewestResultIsDelivered()
    {
        BackgroundRunner runner;
        QSignalSpy delivered(&runner, &BackgroundRunner::delivered);
        QList<int> applied;
        std::atomic<int> computed{0};
        for (int i = 1; i <= 20; ++i)
            runner.run([i, &computed, &applied]() -> std::function<void()> {
                ++computed;
                QThread::msleep(2);
                return [i, &applied] {
                    applied << i;
                };
            });
        QVERIFY(runner.busy());
        runner.waitForIdle();
        QVERIFY(!runner.busy());
        QCOMPARE(applied, QList<int>{20});
        QCOMPARE(delivered.count(), 1);
        // Requests superseded before they started were never computed.
        QVERIFY(computed.load() < 20);
    }

    void aRunningJobIsAskedToStopByANewerRequest()
    {
        BackgroundRunner runner;
        const std::atomic<bool>* stop = runner.stopFlag();
        std::atomic<bool> started{false};
        std::atomic<bool> sawStop{false};
        QList<int> applied;
        // The first job runs until it is asked to stop (a long computation giving up early).
        runner.run([&]() -> std::function<void()> {
            started = true;
            while (!stop->load())
                QThread::msleep(1);
            sawStop = true;
            return [&applied] {
                applied << 1;
            };
        });
        QTRY_VERIFY(started.load());
        QVERIFY(!stop->load()); // nothing newer yet
        bool clearForSecond = false;
        runner.run([&]() -> std::function<void()> {
            clearForSecond = !stop->load(); // the flag is the running job's, cleared at start
            return [&applied] {
                applied << 2;
            };
        });
        runner.waitForIdle();
        QVERIFY(sawStop.load());
        QVERIFY(clearForSecond);
        QCOMPARE(applied, QList<int>{2}); // the stopped job's result is dropped
    }

    void aLowPriorityWorkerAndItsThreadsYieldToTheWindow()
    {
#ifdef __linux__
        const auto self = [] {
            return static_cast<id_t>(gettid());
        };
        const int window = getpriority(PRIO_PROCESS, self());
        BackgroundRunner runner(nullptr, BackgroundRunner::Priority::Low);
        int worker = 0, helper = 0;
        runner.run([&]() -> std::function<void()> {
            worker = getpriority(PRIO_PROCESS, self());
            // A thread the job starts (as core's parallel loops do) inherits the priority.
            std::thread([&helper, &self] { helper = getpriority(PRIO_PROCESS, self()); }).join();
            return []{
                   };
        });
        runner.waitForIdle();
        QVERIFY(worker >= BackgroundRunner::kLowNice);
        QVERIFY(helper >= BackgroundRunner::kLowNice);
        QCOMPARE(getpriority(PRIO_PROCESS, self()),
                 window); // the window's thread is left as it was
#else
        QSKIP("thread priorities are set on Linux only");
#endif
    }

    void resultsArriveThroughTheEventLoop()
    {
        BackgroundRunner runner;
        int value = 0;
        runner.run([] { return std::function<void()>([] {}); });
        runner.run([&value] { return std::function<void()>([&value] { value = 7; }); });
        QTRY_VERIFY(!runner.busy());
        QCOMPARE(value, 7);
    }

    void explanationPlaceholdersAndAnswer()
    {
        const QString text = "<p>{{a}} x {{b}} = {{c}}</p><!--answer--><p>secret</p><!--/answer-->";
        const QHash<QString, QString> values{{"a", "16 bytes"}, {"b", "7 billion"}};
        const QString hidden = fillExplanation(text, values, false);
        QCOMPARE(hidden, QString("<p>16 bytes x 7 billion = {{c}}</p>")); // unknown names stay
        QVERIFY(fillExplanation(text, values, true).contains("secret"));
        // Names are letters, digits, '_' and '.'; other braces stay text, whatever surrounds them.
        const QHash<QString, QString> more{{"a", "1"}, {"x.y_2", "2"}};
        QCOMPARE(fillExplanation("{{{a}}} {{x.y_2}}{{a}} {{a b}} {{}} {{-}} {{a}", more, true),
                 QString("{1} 21 {{a b}} {{}} {{-}} {{a}"));
        // Every answer goes, each up to its own end; one never ended stays.
        QCOMPARE(fillExplanation("1<!--answer-->A<!--/answer-->2<!--answer-->B<!--/answer-->3"
                                 "<!--answer-->C",
                                 {}, false),
                 QString("123<!--answer-->C"));
    }

    void explanationValuesChangeInPlace()
    {
        // Every placeholder of the memory tab's text, each with a value of its own.
        const auto valuesFor = [](const QString& html, const QString& prefix) {
            static const QRegularExpression name("\\{\\{([A-Za-z0-9_.]+)\\}\\}");
            QHash<QString, QString> values;
            for (auto it = name.globalMatch(html); it.hasNext();) {
                const QString key = it.next().captured(1);
                values.insert(key, prefix + key);
            }
            return values;
        };
        const auto shownText = [](const ExplanationPanel& panel) {
            return panel.findChild<QTextBrowser*>()->toPlainText();
        };
        ExplanationPanel panel("memory");
        QHash<QString, QString> values = valuesFor(panel.html(), "a-");
        QVERIFY(values.size() >= 3);
        // Each panel's values all in its text, however many passes they took.
        const auto set = [](ExplanationPanel& p, const QHash<QString, QString>& v) {
            p.setValues(v);
            p.finishUpdate();
        };
        set(panel, values);
        QTextDocument* document = panel.findChild<QTextBrowser*>()->document();
        document->firstBlock().setUserState(42); // gone if the text is built anew
        // New plain values: set where their placeholders are, the text not built again, and
        // the same text as a panel that starts with them.
        for (auto it = values.begin(); it != values.end(); ++it)
            if (it.key().size() % 2 == 0)
                it.value() = "1,234.5 GB";
        set(panel, values);
        QCOMPARE(document->firstBlock().userState(), 42);
        ExplanationPanel fresh("memory");
        set(fresh, values);
        QCOMPARE(shownText(panel), shownText(fresh));
        QVERIFY(shownText(panel).contains("1,234.5 GB"));
        // A value that goes shows its placeholder, and one that comes back its value: in place.
        const QString gone = values.keys().first();
        QHash<QString, QString> fewer = values;
        fewer.remove(gone);
        set(panel, fewer);
        QCOMPARE(document->firstBlock().userState(), 42);
        QVERIFY(shownText(panel).contains("{{" + gone + "}}"));
        set(panel, values);
        QCOMPARE(document->firstBlock().userState(), 42);
        QCOMPARE(shownText(panel), shownText(fresh));
        // A value with markup: the text is built anew, and still the same as a fresh one's.
        values[values.keys().first()] = "<b>bold</b>";
        set(panel, values);
        QCOMPARE(document->firstBlock().userState(), -1);
        set(fresh, values);
        QCOMPARE(shownText(panel), shownText(fresh));
        // Revealing the answer shows its values too.
        panel.setAnswerRevealed(true);
        fresh.setAnswerRevealed(true);
        ExplanationPanel blank("memory"); // every placeholder, the answer's too
        blank.setAnswerRevealed(true);
        const QHash<QString, QString> revealed = valuesFor(blank.html(), "b-");
        set(panel, revealed);
        set(fresh, revealed);
        QCOMPARE(shownText(panel), shownText(fresh));
        QVERIFY(!shownText(panel).contains("{{"));
    }

    void anExplanationValueRepaintsOnlyItsParagraph()
    {
        // Two values far apart, the first and last of the text, change at a slider step: what
        // is painted again is their paragraphs, not the text between them.
        ExplanationPanel panel("memory");
        QStringList keys;
        static const QRegularExpression name("\\{\\{([A-Za-z0-9_.]+)\\}\\}");
        for (auto it = name.globalMatch(panel.html()); it.hasNext();)
            keys << it.next().captured(1);
        QVERIFY(keys.size() >= 3);
        QHash<QString, QString> values;
        for (const QString& key : keys)
            values.insert(key, "1");
        panel.setValues(values);
        panel.finishUpdate();
        panel.resize(400, 2000); // the whole text in view
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QWidget* viewport = panel.findChild<QTextBrowser*>()->viewport();
        scalelab::test::PaintedRegion paints(viewport);
        values[keys.first()] = "2";
        values[keys.last()] = "3";
        panel.setValues(values);
        QTRY_VERIFY(!panel.updatePending());
        QTRY_VERIFY(!paints.region.isEmpty());
        QTest::qWait(20);
        const QRect bounds = paints.region.boundingRect();
        int painted = 0;
        for (const QRect& r : paints.region)
            painted += r.width() * r.height();
        QVERIFY2(
            painted < bounds.width() * bounds.height() / 2,
            qPrintable(
                QString("%1 of %2 x %3").arg(painted).arg(bounds.width()).arg(bounds.height())));
    }

    void theValuesOfOneTableChangeInOneEdit()
    {
        // Qt lays out a whole table again for an edit in any of its cells: values that change
        // together inside one table must reach the document as one change, not one each.
        ExplanationPanel panel("plan");
        static const QRegularExpression name("\\{\\{([A-Za-z0-9_.]+)\\}\\}");
        static const QRegularExpression table("<table.*?</table>",
                                              QRegularExpression::DotMatchesEverythingOption);
        const QString html = panel.html();
        QHash<QString, QString> values;
        for (auto it = name.globalMatch(html); it.hasNext();)
            values.insert(it.next().captured(1), "1");
        QStringList inTable; // the values of the first table with several, each there only once
        for (auto t = table.globalMatch(html); t.hasNext() && inTable.size() < 2;) {
            inTable.clear();
            for (auto it = name.globalMatch(t.next().captured()); it.hasNext();) {
                const QString key = it.next().captured(1);
                if (html.count("{{" + key + "}}") == 1)
                    inTable << key;
            }
        }
        QVERIFY(inTable.size() >= 2);
        panel.setValues(values);
        panel.finishUpdate(); // a slow build (the sanitizers') may not set them all in one pass
        int changes = 0;
        QTextDocument* document = panel.findChild<QTextBrowser*>()->document();
        connect(document, &QTextDocument::contentsChange, &panel, [&changes] { ++changes; });
        for (int i = 0; i < inTable.size(); ++i)
            values[inTable[i]] = QString::number(20 + i);
        panel.setValues(values);
        panel.finishUpdate();
        QCOMPARE(changes, 1);
        const QString text = document->toPlainText();
        for (int i = 0; i < inTable.size(); ++i)
            QVERIFY2(text.contains(QString::number(20 + i)), qPrintable(inTable[i]));
    }

    void aDragsValuesReachEveryParagraphInTurn()
    {
        // The values of a slider step go into the text an edit (a paragraph, or a table) a
        // pass, a frame apart. While a drag keeps changing them, each pass sets the newest
        // values into the next edit after the last one's: every paragraph has its turn, none
        // is rebuilt, and once the slider rests the text is what a panel showing the last
        // values from the start shows.
        ExplanationPanel panel("plan");
        static const QRegularExpression name("\\{\\{([A-Za-z0-9_.]+)\\}\\}");
        QHash<QString, QString> values;
        for (auto it = name.globalMatch(panel.html()); it.hasNext();)
            values.insert(it.next().captured(1), "x0x");
        QVERIFY(values.size() >= 20);
        panel.setValues(values);
        panel.finishUpdate();
        QTextDocument* document = panel.findChild<QTextBrowser*>()->document();
        document->firstBlock().setUserState(42); // gone if the text is built anew
        panel.setSliceBudget(0);
        const auto step = [&values](int k) {
            for (QString& value : values)
                value = QString("x%1x").arg(k);
            return values;
        };
        int changes = 0;
        connect(document, &QTextDocument::contentsChange, &panel, [&changes] { ++changes; });
        panel.setValues(step(1));
        QCOMPARE(changes, 1); // the first edit at once, the rest to come
        QVERIFY(panel.updatePending());
        // The drag: new values after every edit, until the first values are all gone.
        bool dragging = true;
        connect(
            document, &QTextDocument::contentsChange, &panel,
            [&] {
                if (dragging)
                    panel.setValues(step(changes + 1));
            },
            Qt::QueuedConnection);
        QTRY_VERIFY(!document->toPlainText().contains("x0x") || changes >= 40);
        dragging = false;
        QVERIFY2(!document->toPlainText().contains("x0x"),
                 qPrintable(QString("after %1 edits").arg(changes)));
        QTRY_VERIFY(!panel.updatePending());
        QCOMPARE(document->firstBlock().userState(), 42);
        ExplanationPanel fresh("plan");
        fresh.setValues(values);
        fresh.finishUpdate();
        QCOMPARE(document->toPlainText(), fresh.findChild<QTextBrowser*>()->toPlainText());
    }

    void explanationFollowsTheLocale_data()
    {
        QTest::addColumn<QString>("locale");
        QTest::addColumn<QString>("file");
        QTest::newRow("language") << "de_DE"
                                  << "memory.de.html";
        QTest::newRow("language and country") << "pt_BR"
                                              << "memory.pt_BR.html";
        QTest::newRow("other country, no language file") << "pt_PT"
                                                         << "memory.html";
        QTest::newRow("no translation") << "fr_FR"
                                        << "memory.html";
        QTest::newRow("English") << "en_US"
                                 << "memory.html";
        QTest::newRow("C") << "C"
                           << "memory.html";
    }

    void explanationFollowsTheLocale()
    {
        QFETCH(QString, locale);
        QFETCH(QString, file);
        QTemporaryDir dir;
        for (const QString name : {"memory.html", "memory.de.html", "memory.pt_BR.html"}) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QCOMPARE(explanationFile(dir.path(), "memory", QLocale(locale)), dir.filePath(file));
        // The compiled-in texts: English until a translation is added.
        QCOMPARE(explanationFile(":/explanations", "memory", QLocale(locale)),
                 QString(":/explanations/memory.html"));
        QVERIFY(QFile::exists(explanationFile(":/explanations", "memory", QLocale(locale))));
    }

    void countTextReadsInTheRightNumber_data()
    {
        QTest::addColumn<qint64>("n");
        QTest::addColumn<QString>("text");
        // Without a translation tr() hands back the English source, "(s)" and all.
        QTest::newRow("one") << qint64(1) << "1 slot";
        QTest::newRow("none") << qint64(0) << "0 slots";
        QTest::newRow("two") << qint64(2) << "2 slots";
        QTest::newRow("grouped") << qint64(4096) << "4,096 slots";
        QTest::newRow("past int") << qint64(5'000'000'001) << "5,000,000,001 slots";
    }

    void countTextReadsInTheRightNumber()
    {
        QFETCH(qint64, n);
        QFETCH(QString, text);
        QCOMPARE(countText(QCoreApplication::translate("TstWidgets", "%1 slot(s)", nullptr,
                                                       pluralChoice(n)),
                           n),
                 text);
        // Plural rules read the last digits: a count past int's range keeps them.
        QCOMPARE(pluralChoice(n) % 100, static_cast<int>(n % 100));
    }

    void viridisEnds()
    {
        QCOMPARE(viridis(0.0), QColor(68, 1, 84));
        QCOMPARE(viridis(1.0), QColor(253, 231, 37));
        QCOMPARE(viridis(-3.0), viridis(0.0));
        QCOMPARE(viridis(std::nan("")), viridis(0.0));
    }

    void coloursFollowTheRange()
    {
        HeatmapPanel heat("test-heatmap");
        Eigen::MatrixXd m(2, 2);
        m << 0, 1, 2, 4;
        heat.setMatrix(m);
        QCOMPARE(heat.colorRange(), std::make_pair(0.0, 4.0));
        QCOMPARE(heat.colorFor(0), viridis(0));
        QCOMPARE(heat.colorFor(4), viridis(1));
        QCOMPARE(heat.colorFor(2), viridis(0.5));
        heat.setLogScale(true);
        QCOMPARE(heat.colorRange(), std::make_pair(1.0, 4.0)); // smallest positive value
        QCOMPARE(heat.colorFor(2), viridis(0.5)); // halfway in log10
    }

    void colourStepsAreWhereTheirBeginningsSayForEveryValue()
    {
        // The step estimated from the value (or its rough log2) must be the step a binary search
        // of the beginnings gives: at each beginning, a hair either side of it, across the range
        // and far outside it, on ranges narrow enough to make the estimate miss by many steps.
        struct Case {
            double lo, hi;
            bool log;
        };
        const Case cases[] = {{0, 4, false},          {-3, 1e6, false}, {1, 1 + 1e-12, false},
                              {1e-7, 30, true},       {1, 2, true},     {1, 1 + 1e-9, true},
                              {1e-310, 1e-300, true}, {0, 5, true},     {2.5, 2.5, false}};
        constexpr int n = ColourSteps::kCount;
        for (const Case& k : cases) {
            const ColourSteps steps({k.lo, k.hi}, k.log);
            const auto& starts = steps.starts();
            const bool logUsable = k.log && k.lo > 0;
            // The beginnings as the drawing has always placed them.
            for (int i = 1; i < n; ++i) {
                const double t = i / double(n);
                const double expected = logUsable
                    ? std::pow(10.0, std::log10(k.lo) + t * (std::log10(k.hi) - std::log10(k.lo)))
                    : k.lo + t * (k.hi - k.lo);
                QCOMPARE(starts[static_cast<std::size_t>(i - 1)], expected);
            }
            std::vector<double> values = {0.0,
                                          -1.0,
                                          5e-324,
                                          std::numeric_limits<double>::max(),
                                          std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity(),
                                          k.lo,
                                          k.hi};
            for (double s : starts) {
                values.push_back(s);
                values.push_back(std::nextafter(s, -std::numeric_limits<double>::infinity()));
                values.push_back(std::nextafter(s, std::numeric_limits<double>::infinity()));
            }
            for (int i = -100; i <= 1100; ++i)
                values.push_back(
                    logUsable ? std::pow(
                        10.0, std::log10(k.lo) + i / 1000.0 * (std::log10(k.hi) - std::log10(k.lo)))
                              : k.lo + i / 1000.0 * (k.hi - k.lo));
            for (double v : values) {
                const int bisected = static_cast<int>(
                    std::upper_bound(starts.begin(), starts.end(), v) - starts.begin());
                const int expected = k.log && !(logUsable && v > 0) ? 0 : bisected;
                QVERIFY2(steps.stepOf(v) == expected,
                         qPrintable(QString("range %1 .. %2%3, value %4: step %5, not %6")
                                        .arg(k.lo, 0, 'g', 17)
                                        .arg(k.hi, 0, 'g', 17)
                                        .arg(k.log ? " (log)" : "")
                                        .arg(v, 0, 'g', 17)
                                        .arg(steps.stepOf(v))
                                        .arg(expected)));
            }
            QCOMPARE(steps.stepOf(std::nan("")), 0);
            QCOMPARE(steps.colour(0), viridis(0).rgb());
            QCOMPARE(steps.colour(n - 1), viridis(1).rgb());
            QCOMPARE(steps.colour(n / 2), viridis((n / 2) / double(n - 1)).rgb());
        }
    }

    void smallMatricesWriteTheirValues()
    {
        HeatmapPanel heat("test-heatmap");
        Eigen::MatrixXd m(2, 2);
        m << 2, 1, 0, 3;
        heat.setMatrix(m);
        QVERIFY(heat.writesValues(QSizeF(800, 600)));
        heat.setMatrix(Eigen::MatrixXd::Ones(64, 64));
        QVERIFY(!heat.writesValues(QSizeF(800, 600)));
    }

    void longerRowLabelsMoveThePlotRight()
    {
        // The widest row label is measured once per labels (a thousand of them cost a paint
        // milliseconds): new labels must be measured again.
        HeatmapPanel heat("test-heatmap");
        Eigen::MatrixXd m(2, 2);
        m << 4, 4, 4, 4; // every cell the top colour
        heat.setMatrix(m);
        const auto firstCellColumn = [&heat] {
            QImage image(600, 400, QImage::Format_ARGB32);
            image.fill(Qt::white);
            QPainter painter(&image);
            heat.render(painter, QRectF(0, 0, 600, 400));
            painter.end();
            for (int x = 0; x < image.width(); ++x)
                if (image.pixelColor(x, image.height() / 2) == heat.colorFor(4))
                    return x;
            return -1;
        };
        heat.setRowLabels({"1", "2"});
        const int shortLabels = firstCellColumn();
        heat.setRowLabels({"a much longer first row", "and a second one"});
        const int longLabels = firstCellColumn();
        QVERIFY(shortLabels > 0);
        QVERIFY(longLabels > shortLabels + 50);
    }

    void aSmallMatrixFillsEachCellWholeInItsColour()
    {
        // A few cells are filled one by one rather than stretched from an image: each must
        // cover its own quarter of the plot, row 0 on top and column 1 on the right.
        HeatmapPanel heat("test-heatmap");
        Eigen::MatrixXd m(2, 2);
        m << 0, 4, 0, 0; // only row 0, column 1 at the top colour
        heat.setMatrix(m);
        QImage image(600, 400, QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        heat.render(painter, QRectF(0, 0, 600, 400));
        painter.end();
        const QColor bottom = heat.colorFor(0), top = heat.colorFor(4);
        // The plot: inside its grey frame, the first one met from the left and from the top.
        const QColor frame(90, 90, 90);
        const auto edges = [&](auto at, int from, int to) {
            std::vector<int> found;
            for (int i = from; i < to && found.size() < 2; ++i)
                if (at(i) == frame && (found.empty() || i > found.back() + 1))
                    found.push_back(i);
            return found;
        };
        const std::vector<int> xs =
            edges([&](int x) { return image.pixelColor(x, image.height() / 2); }, 0, image.width());
        QCOMPARE(xs.size(), std::size_t(2));
        const std::vector<int> ys =
            edges([&](int y) { return image.pixelColor(xs[0] + 5, y); }, 0, image.height());
        QCOMPARE(ys.size(), std::size_t(2));
        const QRect plot(QPoint(xs[0] + 1, ys[0] + 1), QPoint(xs[1] - 1, ys[1] - 1));
        QVERIFY2(plot.width() > 200 && plot.height() > 150,
                 qPrintable(QString("%1 x %2").arg(plot.width()).arg(plot.height())));
        const int midX = plot.left() + plot.width() / 2, midY = plot.top() + plot.height() / 2;
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 2; ++c) {
                const QRect cell(c == 0 ? plot.left() : midX, r == 0 ? plot.top() : midY,
                                 plot.width() / 2, plot.height() / 2);
                const QRect inside = cell.adjusted(3, 3, -3, -3);
                for (const QPoint& p : {inside.topLeft(), inside.topRight(), inside.bottomLeft(),
                                        inside.bottomRight()})
                    QVERIFY2(
                        image.pixelColor(p) == (r == 0 && c == 1 ? top : bottom),
                        qPrintable(
                            QString("cell %1,%2 at %3,%4").arg(r).arg(c).arg(p.x()).arg(p.y())));
            }
    }

    void aPlainCellLooksAsTheStyleDrawsIt()
    {
        // The quick delegate must draw exactly what the style draws, and draw it itself for the
        // plain cells: the style is asked for a cell only where the delegate leaves it one (an
        // icon, two lines, a text cut short).
        struct CountingStyle : QProxyStyle {
            using QProxyStyle::QProxyStyle;
            mutable int cells = 0;
            void drawControl(ControlElement element, const QStyleOption* option, QPainter* painter,
                             const QWidget* widget) const override
            {
                cells += element == CE_ItemViewItem;
                QProxyStyle::drawControl(element, option, painter, widget);
            }
        };
        CountingStyle style(QStyleFactory::create("Fusion"));
        QTableWidget table(4, 3);
        table.setStyle(&style);
        table.setFocusPolicy(Qt::NoFocus); // no cell wears the focus frame (left to the style)
        table.setAlternatingRowColors(true);
        table.setWordWrap(false);
        const QStringList texts = {
            "Per tensor", "1",    "0.000123",   "Per 1 x 16 block",
            "4,096",      "12.5", "two\nlines", "",
            "-3.1e-05",   "Rows", "1,048,576",  "a text far too long for its narrow column"};
        for (int i = 0; i < texts.size(); ++i) {
            auto* item = new QTableWidgetItem(texts[i]);
            item->setTextAlignment(i % 3 == 0 ? (Qt::AlignLeft | Qt::AlignVCenter)
                                              : (Qt::AlignRight | Qt::AlignVCenter));
            table.setItem(i / 3, i % 3, item);
        }
        QPixmap swatch(12, 12);
        swatch.fill(Qt::red);
        table.item(1, 0)->setIcon(QIcon(swatch));
        QFont bold = table.font();
        bold.setBold(true);
        table.item(1, 2)->setFont(bold);
        table.item(3, 1)->setFlags(Qt::NoItemFlags); // drawn disabled
        table.setColumnWidth(0, 150);
        table.setColumnWidth(1, 90);
        table.setColumnWidth(2, 80);
        table.setRowHeight(2, 44);
        table.resize(380, 200);
        table.show();
        QVERIFY(QTest::qWaitForWindowExposed(&table));
        const auto draw = [&] {
            style.cells = 0;
            return table.viewport()->grab().toImage();
        };
        const QImage byStyle = draw();
        QCOMPARE(style.cells, 12);
        table.setItemDelegate(new PlainCellDelegate(&table));
        const QImage byDelegate = draw();
        // Left to the style: the icon, the two lines, the text too long for its column.
        QCOMPARE(style.cells, 3);
        QCOMPARE(byDelegate, byStyle);
    }

    void aLoneOutlierSurvivesPooling()
    {
        // 3000 x 3000 is pooled to at most 1024 a side; one large value must still colour its
        // pool with the top colour.
        HeatmapPanel heat("test-heatmap");
        Eigen::MatrixXd m = Eigen::MatrixXd::Zero(3000, 3000);
        m(1777, 2222) = 1.0;
        heat.setMatrix(m);
        heat.setTitle("Outlier");
        QImage image(900, 700, QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        heat.render(painter, QRectF(0, 0, 900, 700));
        painter.end();
        int top = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width() - 150; ++x) // left of the colour bar
                if (image.pixelColor(x, y) == viridis(1.0))
                    ++top;
        QVERIFY(top > 0);
    }

    void theFiguresLinePaintsOnceForANewTextAndShowsIt()
    {
        // Counts the label's paints: a new text must cost one, as QLabel's own rich text
        // control asked for a second after the first.
        struct PaintCounter : QObject {
            int paints = 0;
            bool eventFilter(QObject*, QEvent* event) override
            {
                paints += event->type() == QEvent::Paint;
                return false;
            }
        } counter;
        QWidget window;
        auto* label = new FiguresLabel(&window);
        label->setText("<b>Total</b> 114 GB against 80 GB");
        label->setGeometry(0, 0, 400, label->heightForWidth(400));
        window.resize(400, 100);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(50);
        label->installEventFilter(&counter);
        label->setText("<b>Total</b> 115 GB against 80 GB");
        QTRY_COMPARE(counter.paints, 1);
        QTest::qWait(100);
        QCOMPARE(counter.paints, 1);

        // What it paints is the text, in the label's colour, on its first line.
        const QImage image = label->grab().toImage();
        const int line = label->fontMetrics().lineSpacing();
        int ink = 0;
        for (int y = 0; y < std::min(line, image.height()); ++y)
            for (int x = 0; x < image.width(); ++x)
                ink += qGray(image.pixel(x, y)) < 128;
        QVERIFY(ink > 20);
        QCOMPARE(label->heightForWidth(400), line);
    }

    void theFiguresLineHoldsStillWhileItsTextChanges()
    {
        FiguresLabel label;
        const QString longText = QString("<b>Total</b> 114 GB against 80 GB ").repeated(6);
        label.setText(longText);
        const int tall = label.heightForWidth(300);
        QVERIFY(tall > 2 * label.fontMetrics().lineSpacing()); // it wraps at 300 px
        // A shorter text at the same width keeps the height: the charts below do not jump.
        label.setText("<b>Total</b> 114 GB");
        QCOMPARE(label.heightForWidth(300), tall);
        // A longer one grows it; a new width measures afresh.
        label.setText(longText + longText);
        QVERIFY(label.heightForWidth(300) > tall);
        label.setText("<b>Total</b> 114 GB");
        QVERIFY(label.heightForWidth(2000) < tall);
        // The layout asks for nothing wider than the charts give it.
        QCOMPARE(label.sizeHint().width(), 0);
        QCOMPARE(label.minimumSizeHint().width(), 0);
    }

    void aShorterTextKeepsItsFirstLineInPlace()
    {
        // After a preview's extra sentence the label keeps its height; the text that remains
        // stays at the top, where its first line was, instead of moving down to the middle.
        FiguresLabel label;
        label.setText(QString("<b>Total</b> 114 GB against 80 GB ").repeated(6));
        const int tall = label.heightForWidth(300);
        label.setText("<b>Total</b> 114 GB");
        QCOMPARE(label.heightForWidth(300), tall);
        label.resize(300, tall);
        const QImage image = label.grab().toImage();
        const int line = label.fontMetrics().lineSpacing();
        QVERIFY(tall >= 3 * line);
        int top = 0, below = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                (y < line ? top : below) += qGray(image.pixel(x, y)) < 128;
        QVERIFY(top > 20);
        QCOMPARE(below, 0);
    }

    void aNewFigureRepaintsOnlyTheLinesItChanged()
    {
        // A slider step changes a figure or two of the line: what is painted again is the
        // rows of the lines whose text or format changed, and the label then looks as it does
        // painted whole.
        QWidget window;
        auto* line = new FiguresLine(&window);
        FiguresLabel* label = line->label();
        label->setText("<b>Error</b> 2.66 %<br>Scale = 311 / 448 = <b>0.694</b><br>Why so little?");
        window.resize(500, 200);
        line->setGeometry(0, 0, 500, 200);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(20);
        const int rows = label->fontMetrics().lineSpacing();
        const auto paintedAfter = [&](const QString& text) {
            QImage shown(label->size(), QImage::Format_ARGB32);
            label->QWidget::render(&shown);
            scalelab::test::PaintedRegion painted(label);
            label->setText(text);
            if (!QTest::qWaitFor([&painted] { return !painted.region.isEmpty(); }))
                return std::pair{QRegion(), false}; // nothing painted
            QTest::qWait(20);
            const QRegion region = painted.region; // (rendering paints too)
            // What the screen shows after painting that region over the old picture.
            label->QWidget::render(&shown, region.boundingRect().topLeft(), region);
            QImage whole(label->size(), QImage::Format_ARGB32);
            label->QWidget::render(&whole);
            // (An empty region would render the whole label: nothing painted is no pass.)
            return std::pair{region, !region.isEmpty() && shown == whole};
        };
        // A new figure on the second line: that row alone.
        auto [region, same] = paintedAfter(
            "<b>Error</b> 2.66 %<br>Scale = 361 / 448 = <b>0.805</b><br>Why so little?");
        QVERIFY(same);
        QVERIFY(region.intersects(QRect(0, rows + rows / 2, label->width(), 1)));
        QVERIFY(!region.intersects(QRect(0, rows / 2, label->width(), 1)));
        QVERIFY(!region.intersects(QRect(0, 2 * rows + rows / 2, label->width(), 1)));
        // The same words in another format: that line too.
        std::tie(region, same) = paintedAfter(
            "<b>Error</b> 2.66 %<br>Scale = 361 / 448 = <b>0.805</b><br><b>Why</b> so little?");
        QVERIFY(same);
        QVERIFY(region.intersects(QRect(0, 2 * rows + rows / 2, label->width(), 1)));
        QVERIFY(!region.intersects(QRect(0, rows / 2, label->width(), 1)));
        // A text of another height: all of it.
        std::tie(region, same) = paintedAfter("<b>Error</b> 2.66 %");
        QVERIFY(same);
        QVERIFY(region.contains(QRect(0, 0, label->width(), label->height())));
    }

    void theFiguresLineAsksForRoomOnlyForAnotherHeight()
    {
        // A window laid out as a tab: the figures line above a widget that takes the rest.
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* line = new FiguresLine;
        auto* below = new QWidget;
        layout->addWidget(line);
        layout->addWidget(below, 1);
        line->label()->setText("<b>Total</b> 114 GB against 80 GB");
        window.resize(400, 300);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const int oneLine = line->height();
        QCOMPARE(oneLine, line->label()->heightForWidth(line->width()));
        int layouts = 0;
        scalelab::test::EventSpy spy(&window, QEvent::LayoutRequest, [&] { ++layouts; });

        // A new figure on the same one line: the label shows it, nothing is laid out again.
        line->label()->setText("<b>Total</b> 115 GB against 80 GB");
        QTest::qWait(50);
        QCOMPARE(layouts, 0);
        QCOMPARE(line->height(), oneLine);
        QCOMPARE(line->label()->text(), QString("<b>Total</b> 115 GB against 80 GB"));
        QCOMPARE(line->label()->geometry(), line->rect());

        // A text that wraps: the line takes the room it needs, and the label fills it.
        const QString longer = QString("<b>Total</b> 114 GB against 80 GB ").repeated(4);
        line->label()->setText(longer);
        QTRY_VERIFY(line->height() > oneLine);
        QCOMPARE(line->height(), line->label()->heightForWidth(line->width()));
        QCOMPARE(line->label()->geometry(), line->rect());
        QVERIFY(layouts > 0);
    }

    void aHeatmapPairsTitleOfAsManyLinesLaysNothingOut()
    {
        // The FP8 tab renames its maps' title between a preview and the exact figures: the row
        // the maps stand in must not be laid out again for it.
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* pair = new HeatmapPairPanel("pair");
        layout->addWidget(pair);
        pair->setTitle("|error| per value (matrix units)");
        pair->setMatrices(Eigen::MatrixXd::Constant(8, 8, 1.0),
                          Eigen::MatrixXd::Constant(8, 8, 2.0));
        window.resize(900, 500);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(50);
        const QRect mapBefore = pair->left()->geometry();
        int layouts = 0;
        scalelab::test::EventSpy spy(&window, QEvent::LayoutRequest, [&] { ++layouts; });
        pair->setTitle("|error| per value (last full result)");
        QTest::qWait(50);
        QCOMPARE(layouts, 0);
        QCOMPARE(pair->title(), QString("|error| per value (last full result)"));
        QCOMPARE(pair->left()->geometry(), mapBefore);
        // A title that needs more lines at this width moves the maps down.
        pair->setTitle(QString("A title long enough to wrap ").repeated(12));
        QTRY_VERIFY(pair->left()->geometry().top() > mapBefore.top());
    }

    void newValuesRepaintAMapsCellsAndBarLabelsAlone()
    {
        // A slider step gives the FP8 tab's maps new values of the same shape: what is painted
        // again is the cells and the colour bar's labels, not the titles or the row and column
        // labels, and the maps then look as they do painted whole.
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* pair = new HeatmapPairPanel("pair");
        layout->addWidget(pair);
        pair->setTitle("|error| per value");
        for (HeatmapPanel* map : {pair->left(), pair->right()}) {
            map->setTitle("A map");
            map->setAxisTitles("Column", "Row");
            map->setColorBarTitle("|error|");
        }
        const auto ramp = [](double top) {
            Eigen::MatrixXd m(16, 64);
            for (Eigen::Index r = 0; r < m.rows(); ++r)
                for (Eigen::Index c = 0; c < m.cols(); ++c)
                    m(r, c) = top * static_cast<double>(r * m.cols() + c + 1) / double(m.size());
            return m;
        };
        pair->setMatrices(ramp(1.0), ramp(2.0));
        window.resize(900, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(50);
        const QRect mapBefore = pair->left()->geometry();
        HeatmapPanel* map = pair->left();
        // The map as it shows now, painted whole (QWidget::render sends it paint events).
        QImage shown(map->size(), QImage::Format_ARGB32);
        map->QWidget::render(&shown);
        scalelab::test::PaintedRegion painted(map);
        scalelab::test::PaintedRegion pairPainted(pair);
        pair->setMatrices(ramp(3.0), ramp(7.0)); // a new range: the bar's labels change
        QTRY_VERIFY(!painted.region.isEmpty());
        QTest::qWait(20);
        QCOMPARE(map->geometry(), mapBefore);
        QVERIFY(pairPainted.region.isEmpty());
        const QRect whole = map->rect();
        // The title band above the plot and the row labels' band left of it stay as they were.
        QVERIFY(!painted.region.intersects(QRect(0, 0, whole.width(), 20)));
        QVERIFY(!painted.region.intersects(QRect(0, 0, 30, whole.height())));
        QVERIFY(painted.region.boundingRect().width() > whole.width() / 2);
        // What the screen shows after painting that region over the old picture is what a
        // whole paint draws.
        const QRegion region = painted.region; // (rendering paints too)
        map->QWidget::render(&shown, region.boundingRect().topLeft(), region);
        QImage repainted(map->size(), QImage::Format_ARGB32);
        map->QWidget::render(&repainted);
        QCOMPARE(shown, repainted);
        // Values of another shape lay the map out again: it is painted whole.
        QTest::qWait(20);
        painted.region = QRegion();
        pair->setMatrices(ramp(1.0).topRows(8), ramp(2.0).topRows(8));
        QTRY_VERIFY(painted.region.contains(whole));
    }

    void cellsEditedInPlaceRepaintThemselvesAlone()
    {
        // A table of fixed sizes repaints the changed cells only; one that sizes its columns to
        // their contents is told about every cell, and repaints them all.
        for (const bool fitted : {false, true}) {
            QTableWidget table(7, 7);
            table.setFocusPolicy(Qt::NoFocus);
            for (int r = 0; r < 7; ++r)
                for (int c = 0; c < 7; ++c)
                    table.setItem(r, c, new QTableWidgetItem(QString::number(r * 7 + c)));
            if (fitted)
                table.horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
            table.resize(700, 400);
            table.show();
            QVERIFY(QTest::qWaitForWindowExposed(&table));
            QTest::qWait(20);
            scalelab::test::PaintedRegion spy(table.viewport());
            QRegion& painted = spy.region;
            const bool changed = editCellsInPlace(&table, [&] {
                table.item(2, 3)->setText("23 changed");
                table.item(5, 1)->setText("51 changed");
                return QList<QTableWidgetItem*>{table.item(2, 3), table.item(5, 1)};
            });
            QVERIFY(changed);
            QTRY_VERIFY(!painted.isEmpty());
            QTest::qWait(20);
            const QRegion cells = QRegion(table.visualItemRect(table.item(2, 3)))
                + QRegion(table.visualItemRect(table.item(5, 1)));
            if (fitted)
                QCOMPARE(painted, QRegion(table.viewport()->rect()));
            else
                QCOMPARE(painted, cells);
            QCOMPARE(table.item(2, 3)->text(), QString("23 changed"));
            QVERIFY(!editCellsInPlace(&table, [] { return QList<QTableWidgetItem*>{}; }));
        }
    }

    void aCellFitsItsColumnExactlyWhenTheTablesOwnFitIsNoWider()
    {
        QTableWidget table(1, 1);
        table.horizontalHeader()->hide();
        table.horizontalHeader()->setMinimumSectionSize(1);
        auto* item = new QTableWidgetItem;
        table.setItem(0, 0, item);
        QHeaderView* header = table.horizontalHeader();
        const QList<QTableWidgetItem*> cells = {item};
        QFont bold = table.font();
        bold.setBold(true);
        const QStringList texts = {"0.000123", "1.23e-05", "-45.6", "100 %", "12,345,678", "i"};
        for (const bool useBold : {false, true}) {
            if (useBold)
                item->setFont(bold);
            for (const QString& text : texts) {
                item->setText(text);
                // What fitting the column gives: the style's own measure of the cell.
                const int needed = static_cast<QAbstractItemView&>(table).sizeHintForColumn(0);
                for (int width = 4; width < needed + 12; ++width) {
                    header->resizeSection(0, width);
                    QCOMPARE(header->sectionSize(0), width);
                    const bool fits = cellsFitTheirColumns(&table, cells);
                    const QString what = QString("%1 at %2 px, the table's fit %3 px")
                                             .arg(text)
                                             .arg(width)
                                             .arg(needed);
                    // "Fits" exactly where the table's own fit is no wider.
                    QVERIFY2(fits == (width >= needed), qPrintable(what));
                }
            }
        }
        // An icon or a second line is left to the caller.
        header->resizeSection(0, 400);
        item->setText("1");
        QVERIFY(cellsFitTheirColumns(&table, cells));
        item->setText("1\n2");
        QVERIFY(!cellsFitTheirColumns(&table, cells));
        item->setText("1");
        QPixmap swatch(8, 8);
        swatch.fill(Qt::red);
        item->setIcon(QIcon(swatch));
        QVERIFY(!cellsFitTheirColumns(&table, cells));
    }

    void onlyTheColumnsANewTextDoesNotFitWiden()
    {
        QTableWidget table(2, 3);
        table.resize(600, 200);
        table.horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
        table.horizontalHeader()->setStretchLastSection(true);
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c)
                table.setItem(r, c, new QTableWidgetItem("1.5"));
        table.show();
        QVERIFY(QTest::qWaitForWindowExposed(&table));
        QHeaderView* header = table.horizontalHeader();
        fitColumnsToContents(&table);
        const int fitted = header->sectionSize(0);
        header->resizeSection(1, fitted + 30); // left wide by an earlier text
        // A longer text in column 0 widens it to its contents; column 1 keeps its width.
        table.item(0, 0)->setText("12,345,678.5");
        table.item(0, 1)->setText("2");
        QVERIFY(widenColumnsFor(&table, {table.item(0, 0), table.item(0, 1)}));
        QCOMPARE(header->sectionSize(0),
                 static_cast<QAbstractItemView&>(table).sizeHintForColumn(0));
        QVERIFY(header->sectionSize(0) > fitted);
        QCOMPARE(header->sectionSize(1), fitted + 30);
        // A text that fits changes nothing.
        table.item(1, 0)->setText("7");
        QVERIFY(widenColumnsFor(&table, {table.item(1, 0)}));
        QCOMPARE(header->sectionSize(1), fitted + 30);
        // A wider column that leaves the stretching last one too narrow is the caller's to fit.
        table.item(1, 2)->setText("a long last figure");
        fitColumnsToContents(&table);
        const int lastFit = static_cast<QAbstractItemView&>(table).sizeHintForColumn(2);
        QCOMPARE(header->length(), table.viewport()->width()); // the last column stretches
        QVERIFY(header->sectionSize(2) > lastFit);
        const int room = table.viewport()->width() - header->sectionSize(0) - lastFit / 2;
        QString wide;
        while (QFontMetrics(table.font()).horizontalAdvance(wide) < room - 12)
            wide += QLatin1Char('8');
        table.item(1, 1)->setText(wide);
        QVERIFY(!widenColumnsFor(&table, {table.item(1, 1)}));
        QVERIFY(header->sectionSize(2) < lastFit);
    }

    void aCountAxisStepLeavesTheRestOfTheChartAlone()
    {
        // Stages 0 to 3, then 0 to 4, and back, as a slider moves: Qt Charts must not lay the
        // whole chart out again each time (it did while one-digit labels were narrower than
        // "..."), which would set every label of the other axis again.
        QValueAxis *x = nullptr, *y = nullptr;
        QChartView view(twoAxisChart({"a"}, x, y));
        view.resize(900, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        setNiceRange(y, 0, 1);
        setPaddedRange(x, 0, 3, 0.5);
        QTest::qWait(50);
        const QRectF plot = view.chart()->plotArea();
        int sideLabelEdits = 0;
        QStringList bottomLabels;
        for (QGraphicsItem* item : view.scene()->items()) {
            auto* text = dynamic_cast<QGraphicsTextItem*>(item);
            // (Qt Charts keeps an empty item of its own at the scene's corner.)
            if (!text || !text->isVisible() || text->toPlainText().isEmpty())
                continue;
            const QPointF at = text->mapToScene(text->boundingRect().center());
            if (at.x() < plot.left() && at.y() < plot.bottom())
                connect(text->document(), &QTextDocument::contentsChanged, this,
                        [&] { ++sideLabelEdits; });
            else if (at.y() > plot.bottom() && at.y() < plot.bottom() + 40)
                bottomLabels << text->toPlainText();
        }
        QVERIFY(sideLabelEdits == 0);
        // The labels read as plain digits, the spaces around them invisible (as plain text a
        // no-break space reads as a space; the literal "&nbsp;" must not show).
        std::sort(bottomLabels.begin(), bottomLabels.end());
        QCOMPARE(bottomLabels, QStringList({" 0 ", " 1 ", " 2 ", " 3 "}));
        for (int i = 0; i < 6; ++i) {
            setPaddedRange(x, 0, i % 2 ? 3 : 4, 0.5);
            QCoreApplication::processEvents();
        }
        QTest::qWait(50);
        QCOMPARE(sideLabelEdits, 0);
        QCOMPARE(x->max(), 3.5);
        // Labels of two digits need no spaces.
        setPaddedRange(x, 0, 12, 0.5);
        QCOMPARE(x->labelFormat(), QString("%.0f"));
        setNiceRange(y, 0, 7, true);
        QCOMPARE(y->labelFormat(), QString("%.0f")); // up the side, never
    }

    void ticksThinOutOnANarrowChart()
    {
        QChartView view(lineChart(140));
        QValueAxis* x = shownWithBottomAxis(view);
        QVERIFY(x);
        setNiceRange(x, 0, 140);
        // Wide: the usual eight intervals at most, at a round step.
        QCOMPARE(x->tickInterval(), 20.0);
        QCOMPARE(x->max(), 140.0);
        const QVariant before = x->property("scalelab_niceRange");
        setNiceRange(x, 0, 140); // asked again: nothing changes
        QCOMPARE(x->tickInterval(), 20.0);
        QCOMPARE(x->property("scalelab_niceRange"), before);

        // Narrow: fewer, wider-spaced ticks, so no label is cut short ("1...").
        view.resize(260, 400);
        QTRY_VERIFY(x->tickInterval() > 20.0);
        const QFontMetricsF fm(x->labelsFont());
        const double spacing =
            view.chart()->plotArea().width() * x->tickInterval() / (x->max() - x->min());
        QVERIFY2(spacing > fm.horizontalAdvance(QString::number(x->max())),
                 qPrintable(QString::number(spacing)));
        // Wide again: the finer ticks come back.
        view.resize(1200, 400);
        QTRY_COMPARE(x->tickInterval(), 20.0);
    }

    void aStickyRangeHoldsWhileTheDataFitAndFillIt()
    {
        QValueAxis axis;
        setStickyRange(&axis, 0, 140);
        QCOMPARE(axis.min(), 0.0);
        QCOMPARE(axis.max(), 140.0);
        QCOMPARE(axis.tickInterval(), 20.0);
        QSignalSpy ranges(&axis, &QValueAxis::rangeChanged);
        // Down to half the data and back, and on to 45 % of it: the scale stays, the data move
        // against it.
        setStickyRange(&axis, 0, 71);
        setStickyRange(&axis, 0, 130);
        setStickyRange(&axis, 0, 140);
        setStickyRange(&axis, 0, 63);
        QCOMPARE(ranges.count(), 0);
        QCOMPARE(axis.max(), 140.0);
        // Below 45 % of the data the range was made for: a tighter nice range; above the top: a
        // wider one.
        setStickyRange(&axis, 0, 62);
        QCOMPARE(axis.max(), 70.0);
        QCOMPARE(axis.tickInterval(), 10.0);
        setStickyRange(&axis, 0, 71);
        QCOMPARE(axis.max(), 80.0);
        // A new lower end is a new range whatever the span.
        setStickyRange(&axis, 10, 80);
        QCOMPARE(axis.min(), 10.0);
        QCOMPARE(ranges.count(), 3);
    }

    void aStickyRangeKeepsItsScaleWhenTheDataHalve()
    {
        // A top of 101 rounds up to 120: half the data, 50.5, fills less than half the axis,
        // yet halving and doubling again (one step of a log slider each way) keeps the scale.
        QValueAxis axis;
        setStickyRange(&axis, 0, 101);
        QCOMPARE(axis.max(), 120.0);
        QSignalSpy ranges(&axis, &QValueAxis::rangeChanged);
        setStickyRange(&axis, 0, 50.5);
        setStickyRange(&axis, 0, 101);
        setStickyRange(&axis, 0, 50.5);
        QCOMPARE(ranges.count(), 0);
        QCOMPARE(axis.max(), 120.0);
        // The next range is made for the data of its own time: 40 is a new, tighter one, and
        // half of it keeps that.
        setStickyRange(&axis, 0, 40);
        QCOMPARE(axis.max(), 40.0);
        setStickyRange(&axis, 0, 20);
        QCOMPARE(axis.max(), 40.0);
        QCOMPARE(ranges.count(), 1);
    }

    void aPaddedRangeKeepsItsEndsWhenTheTicksThinOut()
    {
        QChartView view(lineChart(1333));
        QValueAxis* x = shownWithBottomAxis(view);
        QVERIFY(x);
        // 1333 layers: ticks at round counts from 0, and the axis ends at 1333, not at 1400.
        setPaddedRange(x, 0, 1333, 0);
        QCOMPARE(x->min(), 0.0);
        QCOMPARE(x->max(), 1333.0);
        QCOMPARE(x->tickAnchor(), 0.0);
        const double wide = x->tickInterval();
        view.resize(260, 400);
        QTRY_VERIFY(x->tickInterval() > wide);
        QCOMPARE(x->max(), 1333.0);
    }

    void barValuesChangeInPlace()
    {
        QBarSet set("bars");
        setBarValues(&set, {1, 2, 3});
        QCOMPARE(set.count(), 3);
        QSignalSpy removed(&set, &QBarSet::valuesRemoved);
        QSignalSpy added(&set, &QBarSet::valuesAdded);
        QSignalSpy replaced(&set, &QBarSet::valueChanged);
        // Same count: only the bar that differs is touched.
        setBarValues(&set, {1, 5, 3});
        QCOMPARE(removed.count(), 0);
        QCOMPARE(replaced.count(), 1);
        QCOMPARE(replaced.first().first().toInt(), 1);
        QCOMPARE(set.at(1), 5.0);
        // Fewer bars: the tail goes, the first bar is changed in place.
        replaced.clear();
        setBarValues(&set, {7});
        QCOMPARE(set.count(), 1);
        QCOMPARE(set.at(0), 7.0);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(replaced.count(), 1);
        // More bars: only the new ones are added.
        setBarValues(&set, {7, 8, 9});
        QCOMPARE(added.count(), 1);
        QCOMPARE(set.count(), 3);
        QCOMPARE(set.at(2), 9.0);
    }

    void everyBarChangedAtOnceIsDrawnWithItsNewValue()
    {
        // setBarValues tells the chart of its last change only, so that sixteen new values in
        // two sets cost one layout and not sixteen: that one layout must still draw every bar
        // at its new value.
        auto* set = new QBarSet("bars");
        set->append({1, 2, 3, 4, 5, 6, 7, 8});
        auto* series = new QBarSeries;
        series->append(set);
        auto* chart = new QChart;
        chart->addSeries(series);
        auto* y = new QValueAxis;
        y->setRange(0, 10);
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(y);
        chart->legend()->hide();
        QChartView view(chart);
        view.resize(600, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QList<qreal> values{8, 1, 7, 2, 6, 3, 5, 4};
        // A second set of the same series changes too: the layout comes after both.
        auto* other = new QBarSet("other");
        other->append({1, 1, 1, 1, 1, 1, 1, 1});
        series->append(other);
        setBarValues({{set, values}, {other, {2, 2, 2, 2, 2, 2, 2, 2}}});
        QCoreApplication::processEvents();
        // The bars left to right: their heights stand as their values, to within a pixel.
        // (A bar is a rectangle standing on the plot's floor, narrower than a quarter of it.)
        const QRectF plot = chart->plotArea();
        QList<QRectF> bars;
        for (QGraphicsItem* item : view.scene()->items())
            if (auto* rect = qgraphicsitem_cast<QGraphicsRectItem*>(item)) {
                const QRectF r = rect->mapRectToScene(rect->rect());
                if (r.width() < plot.width() / 4 && std::abs(r.bottom() - plot.bottom()) < 1)
                    bars << r;
            }
        // Left to right they come in pairs: the first set's bar, then the other's (2).
        QCOMPARE(bars.size(), 2 * values.size());
        std::sort(bars.begin(), bars.end(),
                  [](const QRectF& a, const QRectF& b) { return a.left() < b.left(); });
        const double perUnit = plot.height() / 10;
        for (int i = 0; i < bars.size(); ++i) {
            const double want = i % 2 == 0 ? values[i / 2] : 2.0;
            QVERIFY2(std::abs(bars[i].height() - want * perUnit) <= 1.0,
                     qPrintable(QString("bar %1 is %2 px high, %3 expected")
                                    .arg(i)
                                    .arg(bars[i].height())
                                    .arg(want * perUnit)));
        }
    }

    void aLegendTooWideForOneRowMovesToTheSideOrIntoRows()
    {
        QValueAxis *x = nullptr, *y = nullptr;
        QChart* chart = twoAxisChart({"Weights (bf16)", "Gradients (bf16)", "Master weights (fp32)",
                                      "Adam moments (fp32)", "Activations saved"},
                                     x, y);
        QChartView view(chart);
        view.resize(1600, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(50);
        QCOMPARE(chart->legend()->alignment(), Qt::AlignBottom); // one row fits
        // Too narrow for one row, wide enough for a column beside the plot: the names stay
        // whole on the right.
        view.resize(800, 500);
        QTRY_COMPARE(chart->legend()->alignment(), Qt::AlignRight);
        // Wide again: back under the chart.
        view.resize(1600, 500);
        QTRY_COMPARE(chart->legend()->alignment(), Qt::AlignBottom);
        // So narrow that a column would squeeze the plot and its axes: the names go into rows
        // under the plot, each whole, in the scene (so exports show them too), below the plot
        // and its axis and inside the chart.
        view.resize(380, 500);
        QTRY_VERIFY(legendRowsShown(chart));
        QVERIFY(!chart->legend()->isVisible());
        const QStringList rows = legendRowsTexts(chart);
        QCOMPARE(rows.size(), 5);
        QCOMPARE(rows.join(' ').replace('\n', ' '),
                 QString("Weights (bf16) Gradients (bf16) Master weights (fp32) Adam moments "
                         "(fp32) Activations saved"));
        QRectF names;
        for (QGraphicsItem* item : chart->scene()->items())
            if (auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item);
                text && rows.contains(text->text()))
                names |= text->sceneBoundingRect();
        QVERIFY(!names.isEmpty());
        QVERIFY2(chart->sceneBoundingRect().contains(names), "the rows leave the chart");
        const QRectF plot = chart->mapRectToScene(chart->plotArea());
        QVERIFY2(names.top() > plot.bottom(), "the rows overlap the plot");
        QCOMPARE(chart->margins().bottom() > 6, true); // room made for them
        // An entry the tab leaves out leaves the rows, and stays out of Qt's legend after.
        QLegendMarker* first = chart->legend()->markers().first();
        showInLegend(first, false);
        fitChartTexts(chart);
        QCOMPARE(legendRowsTexts(chart).size(), 4);
        QVERIFY(!legendRowsTexts(chart).join(' ').replace('\n', ' ').contains("Weights (bf16)"));
        // Qt's legend, given back, shows its entries at once, before any event is handled (an
        // export renders straight after); then the rows again, as the width wants.
        showLegendRows(chart, false);
        QVERIFY(chart->legend()->markers()[1]->isVisible());
        QVERIFY(!first->isVisible());
        fitChartTexts(chart);
        QVERIFY(legendRowsShown(chart));
        // Wide again: Qt's own legend under the chart, and the room given back.
        view.resize(1600, 500);
        QTRY_VERIFY(!legendRowsShown(chart));
        QVERIFY(chart->legend()->isVisible());
        QVERIFY(!first->isVisible());
        QVERIFY(chart->legend()->markers()[1]->isVisible());
        showInLegend(first, true);
        QVERIFY(first->isVisible());
        QCOMPARE(chart->margins().bottom(), 6);
        QTRY_COMPARE(chart->legend()->alignment(), Qt::AlignBottom);
    }

    void axisTitlesWrapOrShortenInsteadOfBeingCut()
    {
        QValueAxis *x = nullptr, *y = nullptr;
        QChart* chart = twoAxisChart({QString()}, x, y);
        const QString xTitle = "Blocks ranked by the largest magnitude of their values";
        const QString yTitle = "Relative RMS error of the block (%)";
        styleAxis(x, xTitle);
        styleAxis(y, yTitle, "Block error (%)");
        QChartView view(chart);
        view.resize(1600, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        // Room for both: whole, on one line.
        QTRY_COMPARE(x->titleText(), xTitle);
        QCOMPARE(y->titleText(), yTitle);
        // A short, narrow chart: the bottom title wraps onto lines of whole words, and the side
        // one, which would need more lines than its room across, takes its short form. (At 260
        // px high the short form was 2 px longer than its room once the bottom title had
        // wrapped: whether it showed on one line, cut, or wrapped hung on the order of Qt's
        // layouts. The texts are now fitted again until a fit changes nothing, and the height
        // here leaves the short form room to spare.)
        view.resize(420, 290);
        QTRY_COMPARE(y->titleText(), QString("Block error (%)"));
        QTRY_VERIFY(x->titleText().contains("<br>"));
        QCOMPARE(x->titleText().split("<br>").join(' '), xTitle);
        const QFontMetricsF fm(x->titleFont());
        for (const QString& line : x->titleText().split("<br>"))
            QVERIFY2(fm.horizontalAdvance(line) <= chart->plotArea().width(), qPrintable(line));
        // Once the chart is laid out with its fitted titles, each line still fits its room.
        const auto sideLinesFit = [&] {
            const QFontMetricsF side(y->titleFont());
            for (const QString& line : y->titleText().split("<br>"))
                if (side.horizontalAdvance(line) > chart->plotArea().height())
                    return false;
            return true;
        };
        QTRY_VERIFY(sideLinesFit());
        // Lower still: the short form wraps too, where its one line would be cut.
        view.resize(420, 230);
        QTRY_VERIFY(y->titleText().contains("<br>"));
        QCOMPARE(y->titleText().split("<br>").join(' '), QString("Block error (%)"));
        QTRY_VERIFY(sideLinesFit());
        view.resize(420, 290);
        QTRY_COMPARE(y->titleText(), QString("Block error (%)"));
        // The tab's title is still the whole one, and setting it again changes nothing shown.
        QCOMPARE(axisTitle(y), yTitle);
        QCOMPARE(axisTitle(x), xTitle);
        const QString shown = x->titleText();
        setAxisTitle(x, xTitle);
        QCOMPARE(x->titleText(), shown);
        // Wide again: whole titles come back.
        view.resize(1600, 900);
        QTRY_COMPARE(x->titleText(), xTitle);
        QTRY_COMPARE(y->titleText(), yTitle);
        // A new title from the tab replaces the kept one.
        setAxisTitle(y, "Error (%)");
        QCOMPARE(axisTitle(y), QString("Error (%)"));
    }

    /// A point cloud draws its series' marker at each point, where the axes put the point on
    /// the plot, and nothing beyond the plot; the series itself holds no point.
    void aPointCloudDrawsEachPointWhereTheAxesPutIt()
    {
        QGraphicsScene scene;
        auto* chart = new QChart;
        scene.addItem(chart);
        chart->setGeometry(0, 0, 400, 300);
        auto* x = new QValueAxis;
        auto* y = new QValueAxis;
        x->setRange(0, 10);
        y->setRange(0, 10);
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        auto* series = new QScatterSeries;
        series->setName("cloud");
        QImage marker(20, 20, QImage::Format_ARGB32_Premultiplied);
        marker.fill(Qt::red);
        series->setLightMarker(marker);
        series->setMarkerSize(6);
        series->setPointsVisible(false);
        chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(y);
        auto* cloud = new PointCloud(chart, series, x, y);
        QCOMPARE(PointCloud::of(series), cloud);
        cloud->setPoints({{5, 5}, {2, 8}, {12, 5}}); // the last one off the plot
        QCOMPARE(cloud->points().size(), 3);
        QCOMPARE(series->count(), 0);

        const auto render = [&] {
            QImage image(400, 300, QImage::Format_ARGB32_Premultiplied);
            image.fill(Qt::white);
            QPainter painter(&image);
            scene.render(&painter, QRectF(0, 0, 400, 300), QRectF(0, 0, 400, 300));
            return image;
        };
        const auto isRed = [](const QImage& image, QPointF at) {
            return image.pixelColor(at.toPoint()) == QColor(Qt::red);
        };
        QImage image = render();
        QVERIFY(isRed(image, chart->mapToPosition({5, 5}, series)));
        QVERIFY(isRed(image, chart->mapToPosition({2, 8}, series)));
        QVERIFY(!isRed(image, chart->mapToPosition({8, 2}, series)));
        // The third point's centre is past the right edge of the plot: not drawn there.
        const QRectF plot = chart->plotArea();
        QVERIFY(!isRed(image, QPointF(plot.right() + 2, chart->mapToPosition({5, 5}, series).y())));

        // A new range moves the points with it; so does a new plot area.
        x->setRange(0, 20);
        image = render();
        QVERIFY(isRed(image, chart->mapToPosition({12, 5}, series)));
        QVERIFY(isRed(image, chart->mapToPosition({5, 5}, series)));
        chart->setGeometry(0, 0, 300, 200);
        image = render();
        QVERIFY(isRed(image, chart->mapToPosition({2, 8}, series)));
        // Hidden with its series.
        series->setVisible(false);
        image = render();
        QVERIFY(!isRed(image, chart->mapToPosition({2, 8}, series)));
    }
};

QTEST_MAIN(TstWidgets)
#include "tst_widgets.moc"
