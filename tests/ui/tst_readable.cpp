// Readable on a classroom screen: every text of every chart of every tab is whole (no "..."),
// inside its chart and clear of the others, at 1024 x 768, 1280 x 800 (classroom projectors),
// 1800 x 1000 (the size the window opens at on a 1920 x 1080 screen, what most people see first)
// and 1920 x 1080, in desk and in projector type. Every text the window's widgets draw
// (labels, buttons, choice boxes, tab bars, tables, custom charts) is judged the same way, as
// drawn (drawntexts.h).
// SCALELAB_READABLE_SHOTS=DIR saves a screenshot of each case, and of each widget at fault.

#include "chartexport.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "choicebox.h"
#include "drawntexts.h"
#include "explanationpanel.h"
#include "fp8tab.h"
#include "mainwindow.h"
#include "plantab.h"
#include "scenariodocument.h"
#include "tab.h"
#include "tabs.h"
#include "testhelpers.h"

#include <QAbstractButton>
#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDeadlineTimer>
#include <QFile>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QGraphicsView>
#include <QLabel>
#include <QMap>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>
#include <QVBoxLayout>
#include <memory>

using namespace scalelab;

namespace {

/// One visible text of a chart scene, where it sits in the scene.
struct SceneText {
    QString text;
    QRectF box;
    /// What a reader sees of it: the glyphs' own bounds for a line of plain text (a tick or
    /// bar label), the box otherwise. Two boxes may share their leading; two inks may not.
    QRectF ink;
};

QList<SceneText> textsOf(const QChart* chart)
{
    QList<SceneText> texts;
    for (QGraphicsItem* item : chart->scene()->items()) {
        if (!item->isVisible() || item->effectiveOpacity() == 0)
            continue;
        QString text;
        QRectF box;
        QRectF ink;
        if (auto* rich = dynamic_cast<QGraphicsTextItem*>(item)) {
            if (rich->defaultTextColor().alpha() == 0)
                continue; // drawn in no colour: it holds room for a text drawn there instead
            text = rich->toPlainText();
            // The text's own lines, not the document margin around them.
            const qreal margin = rich->document()->documentMargin();
            box = rich->mapRectToScene(
                rich->boundingRect().adjusted(margin, margin, -margin, -margin));
            ink = box;
            // A line of one font (an axis label): its glyphs, placed where its layout put them.
            const QTextDocument* document = rich->document();
            const QTextBlock block = document->firstBlock();
            if (document->blockCount() == 1 && block.layout() && block.layout()->lineCount() == 1) {
                const QTextLine line = block.layout()->lineAt(0);
                const QPointF origin =
                    document->documentLayout()->blockBoundingRect(block).topLeft()
                    + QPointF(line.naturalTextRect().x(), line.y() + line.ascent());
                ink = rich->mapRectToScene(
                    QFontMetricsF(rich->font()).tightBoundingRect(text).translated(origin));
            }
        }
        if (auto* simple = dynamic_cast<QGraphicsSimpleTextItem*>(item)) {
            text = simple->text();
            box = simple->sceneBoundingRect();
            ink = box;
            if (!text.contains(u'\n')) {
                // The item draws its line's top at its origin, so the baseline is one ascent down.
                const QFontMetricsF metrics(simple->font());
                ink = simple->mapRectToScene(
                    metrics.tightBoundingRect(text).translated(0, metrics.ascent()));
            }
        }
        if (!text.trimmed().isEmpty())
            texts.append({text, box, ink});
    }
    return texts;
}

bool elided(const QString& text)
{
    return text.endsWith("...") || text.contains(QChar(0x2026));
}

/// What is wrong with one chart's texts: elided, outside the chart, or overlapping another.
QStringList problemsOf(const ui::ChartViewPanel* panel)
{
    QStringList problems;
    const QChart* chart = panel->chart();
    const QRectF inside = chart->sceneBoundingRect().adjusted(-1, -1, 1, 1);
    const QList<SceneText> texts = textsOf(chart);
    for (qsizetype i = 0; i < texts.size(); ++i) {
        const SceneText& t = texts[i];
        if (elided(t.text))
            problems << QString("%1: \"%2\" is cut short").arg(panel->name(), t.text);
        if (!inside.contains(t.box))
            problems << QString("%1: \"%2\" leaves the chart").arg(panel->name(), t.text);
        for (qsizetype j = i + 1; j < texts.size(); ++j) {
            const QRectF both = t.ink.intersected(texts[j].ink);
            // A pixel of touching is not an overlap a reader sees.
            if (both.width() > 2 && both.height() > 2)
                problems << QString("%1: \"%2\" overlaps \"%3\"")
                                .arg(panel->name(), t.text, texts[j].text);
        }
    }
    return problems;
}

/// The tab's chart area on show (the scroll area holding its charts), or null.
QScrollArea* chartArea(ui::Tab* tab)
{
    QScrollArea* area = nullptr;
    for (QScrollArea* a : tab->findChildren<QScrollArea*>())
        if (a->widget() && a->widget()->objectName() == "charts" && a->isVisible())
            area = a;
    return area;
}

/// The window at `size` in desk or projector type, showing `tab` (and its part, unless -1),
/// drawn; nullptr if the window never showed.
ui::Tab* showPart(app::MainWindow& w, const QString& tab, int part, QSize size, bool projector)
{
    w.setProjectorMode(projector);
    w.resize(size);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w))
        return nullptr;
    w.showTab(tab);
    ui::Tab* shown = w.currentTab();
    if (part >= 0)
        shown->document()->setValue(tab + ".part", part);
    shown->waitForIdle();
    return shown;
}

/// What is wrong with the texts the window's widgets draw (labels, buttons, choice boxes,
/// tables, custom charts), each judged in its own rectangle: a widget inside a scroll area is
/// judged whole, wherever it is scrolled to. Qt Charts scenes are judged by problemsOf.
QStringList widgetProblemsOf(QWidget* window)
{
    QStringList problems;
    for (QWidget* widget : window->findChildren<QWidget*>()) {
        if (!widget->isVisible() || widget->size().isEmpty())
            continue;
        bool chartScene = false;
        for (QWidget* up = widget; up && !chartScene; up = up->parentWidget())
            chartScene = qobject_cast<QGraphicsView*>(up) != nullptr;
        if (chartScene)
            continue;
        QString where = widget->objectName();
        for (QWidget* up = widget->parentWidget(); where.isEmpty() && up; up = up->parentWidget())
            where = up->objectName();
        where = QString("%1 (%2)").arg(where, widget->metaObject()->className());
        test::TextRules rules;
        if (auto* button = qobject_cast<QAbstractButton*>(widget))
            rules.meant << QString(button->text()).remove(u'&');
        if (auto* area = qobject_cast<QAbstractScrollArea*>(widget->parentWidget()))
            rules.scrolls = area->viewport() == widget;
        const QStringList found = test::problemsOfWidget(widget, where, rules);
        // A picture of each widget at fault, to look at.
        if (const QString shots = qEnvironmentVariable("SCALELAB_READABLE_SHOTS");
            !found.isEmpty() && !shots.isEmpty())
            widget->grab().save(
                QString("%1/%2-%3.png")
                    .arg(shots, QString::fromLatin1(QTest::currentDataTag()), widget->objectName())
                    .replace(' ', '-'));
        problems << found;
    }
    // A scroll area that cannot scroll sideways cuts whatever is wider than it (the controls
    // column: a box too wide for it is cut at its right edge, with no way to see the rest).
    for (QScrollArea* area : window->findChildren<QScrollArea*>()) {
        if (!area->isVisible() || !area->widget()
            || area->horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff)
            continue;
        const int room = area->viewport()->width();
        for (QWidget* widget : area->widget()->findChildren<QWidget*>()) {
            if (!widget->isVisible())
                continue;
            const int right = widget->mapTo(area->viewport(), QPoint(widget->width(), 0)).x();
            if (right > room + 1)
                problems << QString("%1 (%2): %3 px wide, cut at %4 px")
                                .arg(widget->objectName(), widget->metaObject()->className())
                                .arg(right)
                                .arg(room);
        }
    }
    return problems;
}

} // namespace

class TstReadable : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { test::useOwnSettings("tst_readable"); }

    void twoLabelsOverlapWhenTheirGlyphsDo()
    {
        // The check below judges texts by their glyphs: two axis labels whose boxes share only
        // their leading (the corner "0" of one axis over the "0" of the other) pass, two labels
        // drawn over each other fail.
        ui::ChartViewPanel panel("probe");
        panel.resize(400, 300);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QFont font = panel.font();
        font.setPixelSize(20);
        const auto label = [&panel, &font](const QString& text, QPointF at) {
            auto* item = new QGraphicsTextItem(text, panel.chart());
            item->setFont(font);
            item->setPos(at);
            return item;
        };
        label("0", QPointF(100, 100));
        // The second one two pixels under the first one's glyphs: their boxes overlap (each box
        // is a line and a margin high), their glyphs do not.
        const QRectF ink = QFontMetricsF(font).tightBoundingRect("0");
        label("1", QPointF(100, 100 + ink.height() + 2));
        QVERIFY2(problemsOf(&panel).isEmpty(), qPrintable(problemsOf(&panel).join("; ")));
        // Moved onto the upper one's glyphs: found.
        label("7", QPointF(103, 103));
        const QString found = problemsOf(&panel).join("; ");
        QVERIFY2(found.contains(QRegularExpression("\"7\" overlaps \"0\"|\"0\" overlaps \"7\"")),
                 qPrintable(found));
    }

    void drawnTextsAreJudgedAsDrawn()
    {
        // The check of the window's widgets finds a label too narrow for its words, a text
        // shortened with an ellipsis and a choice box cutting its choice; a ChoiceBox as narrow
        // shows its choice's short form, whole.
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* narrow = new QLabel("Relative error of each block");
        narrow->setFixedWidth(60);
        auto* shortened = new QLabel(QString("Relative err") + QChar(0x2026));
        auto* plain = new QComboBox;
        auto* choice = new ui::ChoiceBox;
        for (QComboBox* box : {plain, static_cast<QComboBox*>(choice)}) {
            box->addItem("GPipe: all forwards, then all backwards");
            box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
            box->setMinimumContentsLength(4);
            layout->addWidget(box, 0, Qt::AlignLeft);
        }
        layout->addWidget(narrow);
        layout->addWidget(shortened);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const auto found = [](QWidget* w) {
            return test::problemsOfWidget(w, "probe").join("; ");
        };
        QVERIFY2(found(narrow).contains("is cut at an edge"), qPrintable(found(narrow)));
        QVERIFY2(found(shortened).contains("is cut short"), qPrintable(found(shortened)));
        QVERIFY2(found(plain).contains("is cut at an edge"), qPrintable(found(plain)));
        QVERIFY2(found(choice).isEmpty(), qPrintable(found(choice)));
        QCOMPARE(ui::ChoiceBox::shortForm("GPipe: all forwards, then all backwards"),
                 QString("GPipe"));
        QCOMPARE(ui::ChoiceBox::shortForm("H100 80GB (989 TFLOP/s BF16)"), QString("H100 80GB"));
        QCOMPARE(ui::ChoiceBox::shortForm("Other"), QString("Other"));
    }

    void everyTabFitsA1024By768Screen()
    {
        // The window asks for no more than a 1024 x 768 screen holds (less its panel), on
        // every tab, in desk and in projector type: the charts and controls scroll instead.
        for (const bool projector : {false, true}) {
            app::MainWindow w{core::Scenario{}};
            w.setProjectorMode(projector);
            w.resize(1024, 768);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            for (const QString& tab : ui::tabNames()) {
                w.showTab(tab);
                w.currentTab()->waitForIdle();
                QApplication::processEvents();
                const QSize least = w.minimumSizeHint();
                QVERIFY2(least.width() <= 1024 && least.height() <= 700,
                         qPrintable(QString("%1, %2: %3 x %4")
                                        .arg(tab, projector ? "projector" : "desk")
                                        .arg(least.width())
                                        .arg(least.height())));
            }
        }
    }

    void theExplanationLeavesTheChartsTheirWidth_data()
    {
        QTest::addColumn<QString>("tab");
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("projector");
        QTest::addColumn<bool>("beside");
        // (size, projector type, whether the explanation must fit beside the charts)
        const struct {
            QSize size;
            bool projector, beside;
        } screens[] = {{QSize(1280, 800), true, false},
                       {QSize(1024, 768), false, false},
                       {QSize(1920, 1080), true, true},
                       {QSize(1800, 1000), false, true}};
        for (const QString& tab : ui::tabNames())
            for (const auto& [size, projector, beside] : screens)
                QTest::addRow("%s %dx%d %s", qPrintable(tab), size.width(), size.height(),
                              projector ? "projector" : "desk")
                    << tab << size << projector << beside;
    }

    void theExplanationLeavesTheChartsTheirWidth()
    {
        // A teacher shows the explanation (F1) on a 1280 x 800 projector in large type: beside
        // the charts it would leave them less than one readable chart, cut at the right and
        // scrolling sideways; it goes under them instead, across their width. Where there is
        // room it stays beside them.
        QFETCH(QString, tab);
        QFETCH(QSize, size);
        QFETCH(bool, projector);
        QFETCH(bool, beside);
        app::MainWindow w{core::Scenario{}};
        ui::Tab* shown = showPart(w, tab, -1, size, projector);
        QVERIFY(shown);
        w.setExplanationsVisible(true);
        QTRY_VERIFY(shown->explanation() && shown->explanation()->isVisible());
        shown->waitForIdle();
        QApplication::processEvents();
        QScrollArea* area = chartArea(shown);
        QVERIFY(area);
        QVERIFY2(area->widget()->width() <= area->viewport()->width(),
                 qPrintable(QString("charts %1 px wide in %2 px")
                                .arg(area->widget()->width())
                                .arg(area->viewport()->width())));
        const QRect charts(area->mapTo(shown, QPoint(0, 0)), area->size());
        const QWidget* text = shown->explanation();
        const QRect explanation(text->mapTo(shown, QPoint(0, 0)), text->size());
        QVERIFY(!explanation.intersects(charts));
        QVERIFY2(text->width() >= 240 && text->height() >= 4 * text->fontMetrics().lineSpacing(),
                 qPrintable(QString("%1 x %2").arg(text->width()).arg(text->height())));
        const bool isBeside = explanation.left() > charts.right();
        if (beside)
            QVERIFY2(isBeside, "not beside the charts, though there is room");
        else if (!isBeside)
            QVERIFY2(explanation.top() > charts.bottom() && explanation.width() >= charts.width(),
                     "neither beside the charts nor under them, across them");
        // The case that asked for this: the memory tab's charts scrolled sideways.
        if (tab == "memory" && projector && size == QSize(1280, 800)) {
            QVERIFY(!isBeside);
            // And beside them again where there is room.
            w.setProjectorMode(false);
            w.resize(1920, 1080);
            QTRY_VERIFY(text->mapTo(shown, QPoint(0, 0)).x()
                        > area->mapTo(shown, QPoint(0, 0)).x() + area->width() - 1);
            QVERIFY(area->widget()->width() <= area->viewport()->width());
        }
    }

    void everyChartExportedWhole_data()
    {
        QTest::addColumn<QSize>("size");
        // Half a slide, a projector, and a 4K screen.
        QTest::newRow("480x300") << QSize(480, 300);
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("3840x2160") << QSize(3840, 2160);
    }

    void everyChartExportedWhole()
    {
        // Every chart of every tab as an SVG, with its caption, as `scalelab export --caption`
        // writes it: no text of it ends in "..." (an SVG keeps each drawn text as it was
        // drawn, so a text Qt Charts shortened shows so in the file). At 480 x 300 the layout
        // had 78 such texts when charts were laid out at the image's own size. And drawn once
        // more on a recording device: no text shortened, off the canvas, cut by a clip or over
        // another.
        QFETCH(QSize, size);
        document::ScenarioDocument scenario{core::Scenario{}};
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QStringList cut;
        int charts = 0;
        const QRegularExpression drawn(">([^<]+)</text>");
        for (ui::Tab* made : ui::createTabs(&scenario, nullptr, ui::FirstDrawing::WhenShown)) {
            const std::unique_ptr<ui::Tab> tab(made);
            tab->waitForIdle();
            for (ui::ChartPanel* chart : tab->charts()) {
                const QString path = dir.filePath(chart->name() + ".svg");
                const QString failed = ui::exportCharts(
                    {ui::ExportJob(chart, path, ui::ImageFormat::Svg, size, tab->caption())});
                QVERIFY2(failed.isEmpty(), qPrintable(failed));
                QFile file(path);
                QVERIFY(file.open(QIODevice::ReadOnly));
                const QString svg = QString::fromUtf8(file.readAll());
                int texts = 0;
                for (const QRegularExpressionMatch& m : drawn.globalMatch(svg)) {
                    ++texts;
                    if (elided(m.captured(1).trimmed()))
                        cut << QString("%1: \"%2\"").arg(chart->name(), m.captured(1));
                }
                QVERIFY2(texts > 0, qPrintable(chart->name() + ": no text in the SVG"));
                // The same drawing, texts with where they land: each whole, on the canvas,
                // clear of the others.
                test::TextRecorder recorder(size);
                {
                    QPainter painter(&recorder);
                    ui::paintChart(painter, *chart, size, tab->caption());
                }
                QVERIFY2(!recorder.texts().isEmpty(), qPrintable(chart->name()));
                cut << test::problemsOfTexts(recorder.texts(), QRectF(QPointF(), size),
                                             chart->name());
                ++charts;
            }
        }
        QCOMPARE(charts, 26);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join("; ")));
    }

    void theShownTabAloneSetsTheWindowsMinimum()
    {
        app::MainWindow w{core::Scenario{}};
        // Large enough for every explanation beside its charts (under them it asks for no
        // width of its own).
        w.resize(1800, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // Every tab laid out once; then the window's minimum with each tab shown.
        for (const QString& tab : ui::tabNames())
            w.showTab(tab);
        QMap<int, QString> byWidth;
        for (const QString& tab : ui::tabNames()) {
            w.showTab(tab);
            QApplication::processEvents();
            byWidth.insert(w.minimumSizeHint().width(), tab);
        }
        // The tabs need different widths, and the window asks for the shown one's only: the
        // narrowest tab shown, less than the widest.
        QVERIFY2(byWidth.size() > 1, "every tab asks for the same width");
        w.showTab(byWidth.last());
        QApplication::processEvents();
        const int widest = w.minimumSizeHint().width();
        w.showTab(byWidth.first());
        QApplication::processEvents();
        QVERIFY2(w.minimumSizeHint().width() < widest,
                 qPrintable(QString("%1 against %2").arg(w.minimumSizeHint().width()).arg(widest)));
        // The memory tab, the first, fits a 1024 x 768 screen in desk mode, with its
        // explanation beside the charts.
        w.showTab("memory");
        QApplication::processEvents();
        QVERIFY(w.minimumSizeHint().width() <= 1024);
        QVERIFY(w.minimumSizeHint().height() <= 700);
    }

    void noRowSqueezesTheChartsAtTheClassroomSize_data()
    {
        QTest::addColumn<QString>("tab");
        QTest::addColumn<int>("part");
        for (const QString& tab : ui::tabNames())
            QTest::addRow("%s", qPrintable(tab)) << tab << -1;
        QTest::addRow("fp8-accumulation")
            << "fp8" << static_cast<int>(ui::Fp8Tab::Part::Accumulation);
        QTest::addRow("fp8-policy") << "fp8" << static_cast<int>(ui::Fp8Tab::Part::Policy);
        QTest::addRow("plan-time") << "plan" << static_cast<int>(ui::PlanTab::Part::Time);
    }

    void noRowSqueezesTheChartsAtTheClassroomSize()
    {
        // A projector of 1280 x 800 in projector type: the chart area (the charts with the
        // tab's tables and diagrams, scrolling together) shows at least 16 lines of chart type
        // (a chart's readable height is 20: its title or legend may scroll out), whatever the
        // tab puts beside its charts. Before the FP8 maps and table scrolled with the charts,
        // the area over them was 72 px high.
        QFETCH(QString, tab);
        QFETCH(int, part);
        app::MainWindow w{core::Scenario{}};
        ui::Tab* shown = showPart(w, tab, part, QSize(1280, 800), true);
        QVERIFY(shown);
        QApplication::processEvents();
        QScrollArea* area = chartArea(shown);
        QVERIFY2(area, "no chart area on show");
        const int readable = 16 * QFontMetrics(ui::chartFonts().legend).lineSpacing();
        QVERIFY2(
            area->viewport()->height() >= readable,
            qPrintable(
                QString("%1 px shown, %2 readable").arg(area->viewport()->height()).arg(readable)));
        // Every wrapped note of the tab (controls column, rows, figures) has all its lines.
        for (QLabel* note : shown->findChildren<QLabel*>())
            if (note->wordWrap() && note->isVisible() && !note->text().isEmpty())
                QVERIFY2(note->height() >= note->heightForWidth(note->width()),
                         qPrintable(QString("\"%1\": %2 px of %3")
                                        .arg(note->text().left(40))
                                        .arg(note->height())
                                        .arg(note->heightForWidth(note->width()))));
        // And what scrolls in it is whole: every chart and row at least its least height.
        for (QWidget* row : area->widget()->findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
            if (row->isVisible())
                QVERIFY2(row->height() >= row->minimumSizeHint().height(),
                         qPrintable(QString("%1: %2 px of %3")
                                        .arg(row->objectName())
                                        .arg(row->height())
                                        .arg(row->minimumSizeHint().height())));
    }

    void everyTextWholeAtClassroomSizes_data()
    {
        QTest::addColumn<QString>("tab");
        /// The tab's part (the index of its "<tab>.part" choice), -1 for a tab of one part.
        QTest::addColumn<int>("part");
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("projector");
        // (size, projector type)
        const QList<std::pair<QSize, bool>> screens = {
            {QSize(1024, 768), false},  {QSize(1024, 768), true},   {QSize(1280, 800), false},
            {QSize(1280, 800), true},   {QSize(1800, 1000), false}, {QSize(1800, 1000), true},
            {QSize(1920, 1080), false}, {QSize(1920, 1080), true}};
        // The other parts of the FP8 and plan tabs show other charts: each is a case of its own.
        struct Case {
            QString tab;
            int part;
            const char* suffix;
        };
        QList<Case> cases;
        for (const QString& tab : ui::tabNames())
            cases.append({tab, -1, ""});
        cases.append({"fp8", static_cast<int>(ui::Fp8Tab::Part::Accumulation), "-accumulation"});
        cases.append({"fp8", static_cast<int>(ui::Fp8Tab::Part::Policy), "-policy"});
        cases.append({"plan", static_cast<int>(ui::PlanTab::Part::Time), "-time"});
        for (const Case& c : cases)
            for (const auto& [size, projector] : screens)
                QTest::addRow("%s%s %dx%d %s", qPrintable(c.tab), c.suffix, size.width(),
                              size.height(), projector ? "projector" : "desk")
                    << c.tab << c.part << size << projector;
    }

    void everyTextWholeAtClassroomSizes()
    {
        QFETCH(QString, tab);
        QFETCH(int, part);
        QFETCH(QSize, size);
        QFETCH(bool, projector);
        app::MainWindow w{core::Scenario{}};
        ui::Tab* shown = showPart(w, tab, part, size, projector);
        QVERIFY(shown);
        // The window settles over a few turns of the event loop after a resize (ticks thinned
        // to the width, a long legend moved beside the plot, texts wrapped, the explanation
        // made in the background and laid out): judged once it has, up to a few seconds on a
        // slow build (sanitizers).
        const auto problemsNow = [shown, &w] {
            QStringList found = widgetProblemsOf(&w);
            for (ui::ChartPanel* panel : shown->charts())
                if (auto* view = qobject_cast<ui::ChartViewPanel*>(panel);
                    view && view->isVisible())
                    found << problemsOf(view);
            return found;
        };
        QStringList problems = problemsNow();
        for (QDeadlineTimer settle(5000); !problems.isEmpty() && !settle.hasExpired();) {
            QTest::qWait(50);
            shown->waitForIdle();
            problems = problemsNow();
        }

        // The picture once the explanation has come too (a tab computing in the background
        // makes it a little after its charts) and has been laid out.
        if (!qEnvironmentVariableIsEmpty("SCALELAB_READABLE_SHOTS"))
            QTest::qWait(500);
        if (!qEnvironmentVariableIsEmpty("SCALELAB_READABLE_SHOTS"))
            w.grab().save(QString("%1/%2.png")
                              .arg(qEnvironmentVariable("SCALELAB_READABLE_SHOTS"),
                                   QString::fromLatin1(QTest::currentDataTag()).replace(' ', '-')));
        // The window fits the screen, and every chart on show has at least its least size
        // (the size its texts need at this type size), the chart area scrolling instead.
        const QSize least = w.minimumSizeHint();
        if (least.width() > size.width() || least.height() > size.height())
            problems
                << QString("the window asks for %1 x %2").arg(least.width()).arg(least.height());
        for (ui::ChartPanel* chart : shown->charts()) {
            const QSize need = chart->minimumSizeHint().expandedTo(chart->minimumSize());
            if (chart->isVisible()
                && (chart->width() < need.width() || chart->height() < need.height()))
                problems << QString("%1: %2 x %3 of %4 x %5")
                                .arg(chart->name())
                                .arg(chart->width())
                                .arg(chart->height())
                                .arg(need.width())
                                .arg(need.height());
        }
        for (const QString& p : problems)
            qInfo("%s", qPrintable(p));
        QVERIFY2(problems.isEmpty(), qPrintable(QString("%1 problem(s)").arg(problems.size())));
    }
};

QTEST_MAIN(TstReadable)
#include "tst_readable.moc"
