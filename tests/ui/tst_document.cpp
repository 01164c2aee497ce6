// The scenario document and the field tables, without a widget: every input declared once, every
// change an undo step, one signal per changed section.

#include "fields.h"
#include "scenariodocument.h"
#include "scenariojson.h"

#include <QJsonObject>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QUndoStack>
#include <algorithm>

using namespace scalelab;

class TstDocument : public QObject {
    Q_OBJECT

private slots:
    void everyFieldIsDeclaredOnceAndReadsWhatItWrites()
    {
        QSet<QString> keys;
        for (const document::Field& f : document::fields()) {
            QVERIFY2(!keys.contains(f.key), qPrintable("declared twice: " + f.key));
            keys.insert(f.key);
            QVERIFY2(f.key.startsWith(QString::fromLatin1(core::sectionName(f.section).data(),
                                                          static_cast<qsizetype>(
                                                              core::sectionName(f.section).size()))
                                      + '.'),
                     qPrintable(f.key));
            QVERIFY2(f.get && f.set, qPrintable(f.key));
            QVERIFY2(*f.label, qPrintable(f.key + " has no label"));
            QVERIFY2(*f.help, qPrintable(f.key + " has no help"));
            if (f.kind == document::FieldKind::Choice)
                QCOMPARE(f.choices.size(), f.choiceLabels.size());
            // The default lies in the control's range: the window opens on it.
            const core::Scenario defaults;
            const double v = f.get(defaults);
            // (A capacity factor of 0 is "no limit": the check box beside it says so.)
            QVERIFY2((v >= f.minimum && v <= f.maximumIn(defaults))
                         || f.key == "experts.capacity_factor",
                     qPrintable(f.key));
        }
    }

    void everySavedFieldTravelsThroughAFile()
    {
        // Each saved field set off its default on its own (to a value core accepts), written
        // and read back: the same scenario, and the key is in the file under its own name.
        QStringList stuck;
        for (const document::Field& f : document::fields()) {
            if (!f.saved)
                continue;
            // The defaults, and a mixture-of-experts plan for the keys that need experts.
            core::Scenario moe;
            moe.plan.model.experts = 8;
            bool travelled = false;
            for (const core::Scenario& base : {core::Scenario{}, moe})
                for (const double other :
                     {f.get(base) + f.step, f.get(base) - f.step, f.get(base) * 2, f.get(base) / 2,
                      f.maximumIn(base), f.minimum}) {
                    if (travelled)
                        break;
                    const double before = f.get(base);
                    const double hi = f.maximumIn(base);
                    core::Scenario s = base;
                    f.set(s, std::clamp(other, f.minimum, hi));
                    if (f.get(s) == before)
                        continue;
                    try {
                        core::validate(s);
                    } catch (const core::InputError&) {
                        continue; // core refuses this value alone (heads must divide hidden, ...)
                    }
                    const QJsonObject written = document::scenarioToJson(s);
                    QJsonObject object = written;
                    for (const QString& part : f.jsonObject().split('.'))
                        object = object.value(part).toObject();
                    QVERIFY2(object.contains(f.jsonKey()), qPrintable(f.key));
                    QVERIFY2(document::scenarioFromJson(written) == s, qPrintable(f.key));
                    travelled = true;
                }
            if (!travelled)
                stuck << f.key;
        }
        QVERIFY2(stuck.isEmpty(), qPrintable("no other value core accepts: " + stuck.join(", ")));
    }

    void oneDragIsOneStepAndUndoSaysWhichSection()
    {
        document::ScenarioDocument doc;
        QSignalSpy changed(&doc, &document::ScenarioDocument::sectionChanged);
        for (double layers : {33.0, 34.0, 35.0})
            QVERIFY(doc.setValue("memory.layers", layers));
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(changed.count(), 3);
        QCOMPARE(changed.last().first().value<core::Section>(), core::Section::Memory);
        // An edit that changes nothing is no step.
        QVERIFY(!doc.setValue("memory.layers", 35.0));
        QCOMPARE(doc.undoStack()->count(), 1);
        doc.undoStack()->undo();
        QCOMPARE(doc.scenario().memory.layers, std::int64_t(32));
        QCOMPARE(changed.count(), 4);
        // Another section is another step, and only it is announced.
        changed.clear();
        QVERIFY(doc.setValue("pipeline.stages", 8.0));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().first().value<core::Section>(), core::Section::Pipeline);
    }

    void rulesKeepASectionConsistent()
    {
        document::ScenarioDocument doc;
        QVERIFY(doc.setValue("memory.segments", 32.0));
        QVERIFY(doc.setValue("memory.layers", 12.0));
        // Segments may not pass the layers: they follow them down.
        QCOMPARE(doc.scenario().memory.segments, std::int64_t(12));
        // Batch x sequence is the token count; moving the batch keeps the sequence length.
        QVERIFY(doc.setValue("memory.sequence", 512.0));
        QVERIFY(doc.setValue("memory.batch", 8.0));
        QCOMPARE(doc.scenario().memory.tokens, std::int64_t(4096));
        QCOMPARE(doc.value("memory.sequence"), 512.0);
    }

    void replaceAndResetAreOneStepEach()
    {
        document::ScenarioDocument doc;
        core::Scenario other;
        other.fp8.rows = 128;
        other.plan.gpus = 128;
        QSignalSpy changed(&doc, &document::ScenarioDocument::sectionChanged);
        QVERIFY(doc.replace(other, "Open"));
        QCOMPARE(changed.count(), 2); // fp8 and plan, nothing else
        QVERIFY(!doc.replace(other, "Open again"));
        QVERIFY(doc.resetSection(core::Section::Fp8, "Reset FP8"));
        QCOMPARE(doc.scenario().fp8.rows, std::int64_t(64));
        QCOMPARE(doc.scenario().plan.gpus, std::int64_t(128));
        QCOMPARE(doc.undoStack()->count(), 2);
        doc.undoStack()->undo();
        QCOMPARE(doc.scenario().fp8.rows, std::int64_t(128));
    }

    void aFileWithoutTheDisplayKeysReadsAsBefore()
    {
        const core::Scenario s =
            document::scenarioFromJson(QJsonObject{{"memory", QJsonObject{{"tokens", 8192}}}});
        QCOMPARE(s.memory.tokens, std::int64_t(8192));
        QCOMPARE(s.memoryDisplay, core::MemoryDisplay{});
        // A batch that does not divide the tokens names the batch.
        try {
            document::scenarioFromJson(
                QJsonObject{{"memory", QJsonObject{{"tokens", 10}, {"batch", 4}}}});
            QFAIL("a batch of 4 does not divide 10 tokens");
        } catch (const core::InputError& e) {
            QCOMPARE(QString::fromStdString(e.field()), QString("memory.batch"));
        }
    }
};

QTEST_GUILESS_MAIN(TstDocument)
#include "tst_document.moc"
