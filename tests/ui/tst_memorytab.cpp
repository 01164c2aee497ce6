// The memory tab: controls drive the scenario, and the charts show the core's figures.

#include "chartpanel.h"
#include "explanationpanel.h"
#include "memorytab.h"
#include "parametercontrol.h"
#include "scalelab/core/memory.h"
#include "testhelpers.h"

#include <QAbstractButton>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSlider>
#include <QStackedBarSeries>
#include <QTest>

using namespace scalelab;
using namespace scalelab::ui;
using namespace scalelab::test;

class TstMemoryTab : public QObject {
    Q_OBJECT

private:
    /// Every series of both charts against core, for the tab's current inputs.
    void checkAgainstCore(MemoryTab& tab)
    {
        const core::MemoryInputs in = tab.inputs();
        const core::MemoryResult r = core::computeMemory(in);
        const double unit = tab.byteUnit() == ByteUnit::GB ? 1e9 : 1073741824.0;
        auto* bars = qobject_cast<QStackedBarSeries*>(tab.budgetChart()->chart()->series().at(0));
        QVERIFY(bars);
        const QList<QBarSet*> sets = bars->barSets();
        QCOMPARE(sets.size(), 6);
        const int n = tab.checkpointing() ? 2 : 1;
        const double parts[] = {double(r.weightBytes), double(r.gradBytes), double(r.masterBytes),
                                double(r.momentBytes)};
        for (int i = 0; i < 4; ++i)
            QCOMPARE(values(sets[i]), QList<qreal>(n, parts[i] / unit));
        QCOMPARE(sets[4]->at(0), double(r.activationBytes) / unit);
        if (n == 2) {
            QCOMPARE(sets[4]->at(1), 0.0);
            QCOMPARE(sets[5]->at(1), double(r.checkpointedActivationBytes) / unit);
        }

        QChart* ck = tab.checkpointChart()->chart();
        auto* line = seriesNamed<QLineSeries>(ck, "Checkpointed");
        QVERIFY(line);
        QCOMPARE(line->count(), int(in.layers));
        for (int s = 1; s <= in.layers; ++s)
            QCOMPARE(line->at(s - 1),
                     QPointF(s,
                             double(core::checkpointedActivationBytes(
                                 in.tokens, in.hidden, in.layers, s, in.bytesPerValue,
                                 in.tensorsPerLayer))
                                 / unit));
        auto* optimum = seriesNamed<QScatterSeries>(ck, "Fewest");
        QVERIFY(optimum);
        QCOMPARE(optimum->at(0).x(), double(r.optimalSegments));
        auto* current = seriesNamed<QScatterSeries>(ck, "Yours");
        QCOMPARE(current->at(0).x(), double(in.segments));
        // The points say what they are beside them, not in the legend.
        QCOMPARE(tab.currentNote()->text(), QString("Yours: %1").arg(in.segments));
        QCOMPARE(tab.optimumNote()->text(), QString("Fewest: %1").arg(r.optimalSegments));
        for (QScatterSeries* point : {current, optimum})
            for (QLegendMarker* marker : ck->legend()->markers(point))
                QVERIFY(!marker->isVisible());
    }

private slots:
    void opensOnTheDefaults()
    {
        MemoryTab tab;
        QCOMPARE(tab.inputs().parameters, core::MemoryInputs{}.parameters);
        QCOMPARE(tab.inputs().tokens, core::MemoryInputs{}.tokens);
        QCOMPARE(tab.inputs().segments, core::MemoryInputs{}.segments);
        checkAgainstCore(tab);
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("qtKey");
        QTest::newRow("parameters, page up") << "memory.parameters" << int(Qt::Key_PageUp);
        QTest::newRow("layers, right") << "memory.layers" << int(Qt::Key_Right);
        QTest::newRow("segments, left") << "memory.segments" << int(Qt::Key_Left);
        QTest::newRow("hidden, page down") << "memory.hidden" << int(Qt::Key_PageDown);
        QTest::newRow("tensors, home") << "memory.tensors_per_layer" << int(Qt::Key_Home);
        QTest::newRow("moments, end") << "memory.moment_bytes" << int(Qt::Key_End);
    }

    void keyPressesOnASliderChangeTheScenarioAndTheCharts()
    {
        QFETCH(QString, key);
        QFETCH(int, qtKey);
        MemoryTab tab;
        tab.resize(1400, 800);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        ParameterControl* control = tab.control(key);
        QVERIFY(control);
        const double before = control->value();
        core::Scenario scenario = tab.scenario();
        const core::MemoryInputs old = scenario.memory;
        control->slider()->setFocus();
        QTest::keyClick(control->slider(), Qt::Key(qtKey));
        QVERIFY(control->value() != before);
        settle(tab);
        scenario = tab.scenario();
        QVERIFY(!(std::tie(scenario.memory.parameters, scenario.memory.layers,
                           scenario.memory.segments, scenario.memory.hidden,
                           scenario.memory.tensorsPerLayer, scenario.memory.momentBytes)
                  == std::tie(old.parameters, old.layers, old.segments, old.hidden,
                              old.tensorsPerLayer, old.momentBytes)));
        checkAgainstCore(tab);
    }

    void explanationShowsTodaysNumbers()
    {
        MemoryTab tab;
        QVERIFY(tab.explanation());
        const QString html = tab.explanation()->html();
        QVERIFY2(!html.contains("{{"), qPrintable(html));
        QVERIFY(html.contains("16 bytes &times; 7 billion parameters = <b>112 GB</b>"));
        QVERIFY(!html.contains("<b>Answer.</b>")); // predict first
        tab.explanation()->setAnswerRevealed(true);
        QVERIFY(tab.explanation()->html().contains("<b>Answer.</b>"));
        tab.control("memory.parameters")->setValue(1e9);
        settle(tab);
        // The text follows the charts within a tenth of a second (not in the same frame).
        QTRY_VERIFY_WITH_TIMEOUT(tab.explanation()->html().contains("= <b>16 GB</b>"), 2000);
    }

    void segmentsFollowTheLayers()
    {
        MemoryTab tab;
        tab.control("memory.layers")->setValue(6);
        settle(tab);
        QCOMPARE(tab.inputs().layers, std::int64_t(6));
        QCOMPARE(tab.inputs().segments, std::int64_t(6)); // was 8, clamped to the layers
        QCOMPARE(tab.control("memory.segments")->spec().maximum, 6.0);
        checkAgainstCore(tab);
    }

    void exerciseScenario()
    {
        // Exercise 41.1 as a scenario: 1e6 parameters, 8 tokens x 16 hidden x 12 layers.
        core::Scenario s;
        s.memory.parameters = 1'000'000;
        s.memory.tokens = 8;
        s.memory.hidden = 16;
        s.memory.layers = 12;
        s.memory.tensorsPerLayer = 1;
        s.memory.segments = 3;
        MemoryTab tab;
        tab.setScenario(s);
        settle(tab);
        const core::Scenario back = tab.scenario();
        QCOMPARE(back.memory.tokens, std::int64_t(8));
        QCOMPARE(back.memory.parameters, std::int64_t(1'000'000));
        checkAgainstCore(tab);
        // 16,000,000 bytes of model state in four stacked parts.
        auto* bars = qobject_cast<QStackedBarSeries*>(tab.budgetChart()->chart()->series().at(0));
        double state = 0;
        for (int i = 0; i < 4; ++i)
            state += bars->barSets()[i]->at(0);
        QCOMPARE(state * 1e9, 16'000'000.0);
    }

    void unitsAndCheckpointingSwitch()
    {
        MemoryTab tab;
        auto* unit = tab.findChild<QComboBox*>("memory.unit");
        QVERIFY(unit);
        unit->setCurrentIndex(1);
        settle(tab);
        QCOMPARE(tab.byteUnit(), ByteUnit::GiB);
        checkAgainstCore(tab);
        auto* ckpt = tab.findChild<QAbstractButton*>("memory.checkpointing");
        ckpt->setChecked(false);
        settle(tab);
        QVERIFY(!tab.checkpointing());
        checkAgainstCore(tab);
    }

    void recipesSetTheBytes()
    {
        MemoryTab tab;
        auto* recipe = tab.findChild<QComboBox*>("memory.recipe");
        QCOMPARE(recipe->currentIndex(), 0); // 2 + 2 + 4 + 8 is the default
        recipe->setCurrentIndex(1);
        emit recipe->activated(1); // what a user's choice sends
        settle(tab);
        QCOMPARE(tab.inputs().weightBytes, std::int64_t(4));
        QCOMPARE(tab.inputs().masterBytes, std::int64_t(0));
        tab.control("memory.moment_bytes")->setValue(3);
        QCOMPARE(recipe->currentText(), QString("Custom bytes"));
    }

    void acceleratorLine()
    {
        MemoryTab tab;
        auto* preset = tab.findChild<QComboBox*>("memory.accelerator");
        preset->setCurrentIndex(3);
        emit preset->activated(3);
        settle(tab);
        QCOMPARE(tab.acceleratorBytes(), 141e9);
        auto* line = seriesNamed<QLineSeries>(tab.budgetChart()->chart(), "Accelerator");
        QVERIFY(line);
        QCOMPARE(line->at(0).y(), 141.0);
    }

    void scenarioValuesBeyondTheSliderAreKept()
    {
        core::Scenario s;
        s.memory.layers = 2000; // the slider stops at 256; a file may ask for more
        s.memory.segments = 45;
        MemoryTab tab;
        tab.setScenario(s);
        const core::Scenario back = tab.scenario();
        QCOMPARE(back.memory.layers, std::int64_t(2000));
        QCOMPARE(back.memory.segments, std::int64_t(45));
    }
};

QTEST_MAIN(TstMemoryTab)
#include "tst_memorytab.moc"
