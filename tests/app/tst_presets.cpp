// Presets: real models whose derived figures are computed from their shape.

#include "presets.h"
#include "testhelpers.h"

#include <QJsonDocument>
#include <QTest>

using namespace scalelab;

class TstPresets : public QObject {
    Q_OBJECT

private slots:
    void derivedFiguresFollowTheShape()
    {
        const QJsonObject object = QJsonDocument::fromJson(R"({
          "title": "A small dense model",
          "plan": {"model": {"layers": 24, "hidden": 2048, "heads": 16, "ffn_hidden": 5632,
                             "vocab": 32000}, "gpus": 16, "tensor_parallel": 2,
                   "pipeline_parallel": 2, "sequence": 2048, "micro_batch": 2,
                   "global_batch": 64}
        })")
                                       .object();
        const core::Scenario s = document::presetScenario(object);
        const std::int64_t total = core::countParameters(s.plan.model).total;
        QCOMPARE(s.memory.parameters, total);
        QCOMPARE(s.zero.parameters, total);
        QCOMPARE(s.zero.ranks, std::int64_t(16 / (2 * 2)));
        QCOMPARE(s.memory.layers, std::int64_t(24));
        QCOMPARE(s.memory.hidden, std::int64_t(2048));
        QCOMPARE(s.memory.tokens, std::int64_t(2048 * 2));
        QCOMPARE(s.memory.segments, std::int64_t(8)); // the default, under 24 layers
    }

    void typedValuesWin()
    {
        const QJsonObject object = QJsonDocument::fromJson(R"({
          "memory": {"parameters": 123},
          "plan": {"model": {"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 128,
                             "vocab": 100}, "gpus": 8, "tensor_parallel": 1,
                   "global_batch": 8}
        })")
                                       .object();
        const core::Scenario s = document::presetScenario(object);
        QCOMPARE(s.memory.parameters, std::int64_t(123));
        QCOMPARE(s.memory.layers, std::int64_t(2));
        QCOMPARE(s.memory.segments, std::int64_t(2)); // clamped to the layers
    }

    void shippedPresetsAreValidAndCited()
    {
        const QList<document::Preset> presets = document::loadPresets();
        for (const document::Preset& p : presets) {
            QVERIFY2(!p.title.isEmpty() && !p.source.isEmpty(), qPrintable(p.id));
            QVERIFY2(!p.object.value("memory").toObject().contains("parameters"),
                     qPrintable(p.id + ": counts follow from the shape"));
            try {
                document::presetScenario(p.object);
            } catch (const core::InputError& e) {
                QFAIL(qPrintable(p.id + ": " + e.what()));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TstPresets)
#include "tst_presets.moc"
