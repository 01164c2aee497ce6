// Reading and writing scenario JSON (docs/CLI.md) and the report builder.

#include "report.h"
#include "scenariojson.h"
#include "testhelpers.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace scalelab;

namespace {

QJsonObject parse(const char* text)
{
    return QJsonDocument::fromJson(text).object();
}

} // namespace

class TstScenarioJson : public QObject {
    Q_OBJECT

private slots:
    void defaultsAreTheDocumentedOnes()
    {
        // The defaults table of docs/CLI.md, key by key.
        const QJsonObject d = document::scenarioToJson(core::Scenario{});
        const QJsonObject expected = parse(R"({
          "scalelab_scenario": 1,
          "memory": {"parameters": 7000000000, "weight_bytes": 2, "grad_bytes": 2,
                     "master_bytes": 4, "moment_bytes": 8, "tokens": 4096, "hidden": 4096,
                     "layers": 32, "bytes_per_value": 2, "tensors_per_layer": 16, "segments": 8,
                     "batch": 1, "checkpointing": true, "unit": "GB", "accelerator_gb": 80},
          "zero": {"parameters": 7500000000, "ranks": 64, "weight_bytes": 2, "grad_bytes": 2,
                   "optimizer_bytes": 12, "accelerator_gb": 80, "link_bandwidth": 50,
                   "link_latency": 10},
          "tensor_parallel": {"tokens": 8, "d_model": 16, "d_ff": 64, "ranks": 4,
                              "bytes_per_value": 2, "seed": 1, "split": "correct",
                              "precision": "float64"},
          "pipeline": {"stages": 4, "microbatches": 12, "schedule": "gpipe",
                       "virtual_stages": 2, "forward_time": 1.0, "backward_time": 2.0,
                       "weight_time": 0.0, "bubble_definition": "chapter"},
          "experts": {"ranks": 4, "experts": 16, "tokens_per_rank": 4096, "top_k": 2,
                      "skew": 1.0, "capacity_factor": 0, "seed": 1, "popularity": "shuffled",
                      "hidden": 4096, "bytes_per_value": 2},
          "fp8": {"format": "e4m3", "block_size": 16, "rows": 64, "cols": 256,
                  "outlier_scale": 100.0, "seed": 1, "overflow": "saturate", "shown_block": 50,
                  "part": "blocks",
                  "accumulation": {"k_min": 256, "k_max": 16384, "accumulator_bits": 13,
                                   "promotion_interval": 128, "rounding": "aligned_block",
                                   "outputs": 16, "seed": 1},
                  "policy": {"steps": 64, "spike": 10000, "spike_step": 32, "drift": 0,
                             "history": 16, "rows": 16, "cols": 256, "seed": 1}},
          "plan": {"model": {"layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 14336,
                             "vocab": 128256, "gated_mlp": true, "tied_embeddings": false,
                             "experts": 0, "top_k": 2, "shared_experts": 0, "dense_layers": 0},
                   "sequence": 4096, "micro_batch": 1, "global_batch": 512, "gpus": 64,
                   "tensor_parallel": 8, "pipeline_parallel": 1, "virtual_stages": 1,
                   "expert_parallel": 1, "sequence_parallel": true, "recompute": "selective",
                   "zero_stage": 1, "weight_bytes": 2, "grad_bytes": 2, "optimizer_bytes": 12,
                   "gpu_memory_gib": 80,
                   "hardware": {"gpu": "h100_80gb", "precision": "bf16", "gpus_per_node": 8,
                                "nvlink_bandwidth": 450, "nvlink_latency": 2,
                                "ib_bandwidth": 50, "ib_latency": 10, "dp_overlap": 0.8},
                   "train_tokens": 1e12, "part": "memory"}
        })");
        QCOMPARE(d, expected);
    }

    void roundTrip()
    {
        const QJsonObject written = parse(R"({
          "memory": {"parameters": 7.5e9, "layers": 80, "segments": 9},
          "pipeline": {"schedule": "interleaved", "stages": 4, "microbatches": 8,
                       "virtual_stages": 3, "forward_time": 0.25},
          "experts": {"ranks": 2, "experts": 4, "assignments": [[0, 1, 3], [2, 3, 2]],
                      "expert_to_rank": [0, 0, 1, 1], "capacity_factor": 1.25},
          "fp8": {"format": "e5m2", "block_size": 2, "values": [[0.5, -1.25], [3.0, 1e-30]]},
          "plan": {"model": {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8,
                             "ffn_hidden": 28672}, "gpus": 512, "pipeline_parallel": 4,
                   "recompute": "full", "sequence_parallel": false,
                   "search_keep": {"zero_stage": true, "data_parallel": true,
                                   "recompute": false}}
        })");
        const core::Scenario s = document::scenarioFromJson(written);
        QCOMPARE(s.memory.parameters, std::int64_t(7'500'000'000)); // 7.5e9 is whole
        QCOMPARE(s.pipeline.schedule, core::Schedule::Interleaved);
        QCOMPARE(s.pipeline.forwardTime, 0.25);
        QCOMPARE(s.experts.assignments->at(1), (std::vector<std::int64_t>{2, 3, 2}));
        QCOMPARE(s.fp8.format, core::Fp8Format::E5M2);
        QCOMPARE((*s.fp8.values)(1, 1), 1e-30f); // rounded to the nearest float32
        QCOMPARE(s.plan.model.kvHeads, std::optional<std::int64_t>(8));
        QCOMPARE(s.plan.recompute, core::Recompute::Full);
        QVERIFY(!s.plan.sequenceParallel);
        core::SearchKeep keep;
        keep.zeroStage = true;
        keep.dataParallel = true;
        QCOMPARE(s.plan.searchKeep, keep);
        // Written out and read back, nothing changes; a key not kept is not written.
        const QJsonObject again = document::scenarioToJson(s);
        QCOMPARE(again.value("plan").toObject().value("search_keep").toObject(),
                 parse(R"({"zero_stage": true, "data_parallel": true})"));
        QCOMPARE(document::scenarioToJson(document::scenarioFromJson(again)), again);
    }

    void titleAndSourceAreKept()
    {
        core::Scenario s;
        s.title = "Llama 3 8B";
        s.source = "the model card";
        const QJsonObject saved = document::scenarioToJson(s);
        QCOMPARE(saved.value("title").toString(), QStringLiteral("Llama 3 8B"));
        QCOMPARE(saved.value("source").toString(), QStringLiteral("the model card"));
        const core::Scenario again = document::scenarioFromJson(saved);
        QCOMPARE(again.title, s.title);
        QCOMPARE(again.source, s.source);
        QVERIFY(!document::scenarioToJson(core::Scenario{}).contains("title"));
    }

    void errorsNameThePath_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("line");
        QTest::newRow("type")
            << QByteArray(R"({"memory": {"layers": true}})") << "memory.layers"
            << "f.json: memory.layers: expected a whole number in 0..2^53, found true";
        QTest::newRow("core range")
            << QByteArray(R"({"memory": {"layers": 4, "segments": 6}})") << "memory.segments"
            << "f.json: memory.segments: expected a whole number in 1..layers (1..4), found 6";
        QTest::newRow("nested") << QByteArray(
            R"({"experts": {"ranks": 2, "experts": 4, "assignments": [[0], [1, 4]]}})")
                                << "experts.assignments[1][1]"
                                << "";
        QTest::newRow("plan nested key")
            << QByteArray(R"({"plan": {"model": {"kv_heads": 5}}})") << "plan.model.kv_heads"
            << "";
        QTest::newRow("plan unknown nested key")
            << QByteArray(R"({"plan": {"model": {"hiden": 5}}})") << "plan.model.hiden"
            << "";
        QTest::newRow("plan boolean")
            << QByteArray(R"({"plan": {"sequence_parallel": 1}})") << "plan.sequence_parallel"
            << "f.json: plan.sequence_parallel: expected true or false, found 1";
        QTest::newRow("plan layout does not divide")
            << QByteArray(R"({"plan": {"gpus": 60}})") << "plan.gpus"
            << "";
        // Keys holding the path's own punctuation: the error line names them and what was found,
        // and reading the path ends (it once looped for ever on a '[' with no ']'). Plain strings:
        // moc cannot read raw strings that hold an open bracket.
        QTest::newRow("key is a bracket")
            << QByteArray("{\"[\": 0}") << "["
            << "f.json: [: expected one of the sections of a scenario (scalelab_scenario, title, "
               "source, memory, zero, tensor_parallel, pipeline, experts, fp8, plan), found 0";
        QTest::newRow("key with a dot and a bracket")
            << QByteArray("{\"memory\": {\"a.b[\": [1]}}") << "memory.a.b["
            << "f.json: memory.a.b[: expected one of the keys memory knows (parameters, "
               "weight_bytes, grad_bytes, master_bytes, moment_bytes, tokens, hidden, layers, "
               "bytes_per_value, tensors_per_layer, segments, batch, checkpointing, unit, "
               "accelerator_gb), found [1]";
        QTest::newRow("key like an index")
            << QByteArray("{\"memory\": {\"[0]x[\": 2}}") << "memory.[0]x["
            << "f.json: memory.[0]x[: expected one of the keys memory knows (parameters, "
               "weight_bytes, grad_bytes, master_bytes, moment_bytes, tokens, hidden, layers, "
               "bytes_per_value, tensors_per_layer, segments, batch, checkpointing, unit, "
               "accelerator_gb), found 2";
        // A problem that is not an expectation reads as one: no "expected too large".
        QTest::newRow("too large")
            << QByteArray(R"({"memory": {"tokens": 4e15, "hidden": 1e5}})") << "memory.tokens"
            << "f.json: memory.tokens: too large: the byte count it gives passes 2^63 (found "
               "4000000000000000)";
        // A key with a newline in it (found by the fuzzer): the line stays one line.
        QTest::newRow("key with a newline")
            << QByteArray("{\"memory\": {\"h\n idden\": 16}}") << "memory.h\n idden"
            << "f.json: memory.h\\n idden: expected one of the keys memory knows (parameters, "
               "weight_bytes, grad_bytes, master_bytes, moment_bytes, tokens, hidden, layers, "
               "bytes_per_value, tensors_per_layer, segments, batch, checkpointing, unit, "
               "accelerator_gb), found 16";
        QTest::newRow("wrong count of lists")
            << QByteArray(R"({"experts": {"ranks": 2, "experts": 4, "assignments": [[0]]}})")
            << "experts.assignments"
            << "";
    }

    void errorsNameThePath()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, field);
        QFETCH(QString, line);
        const QJsonObject object = QJsonDocument::fromJson(json).object();
        try {
            document::scenarioFromJson(object);
            QFAIL("no error");
        } catch (const core::InputError& e) {
            QCOMPARE(QString::fromStdString(e.field()), field);
            if (!line.isEmpty())
                QCOMPARE(document::describeInputError("f.json", e, object), line);
        }
    }

    void reportFollowsTheCore()
    {
        core::Scenario s;
        s.memory.parameters = 123'456'789;
        const QJsonObject r = app::buildReport(s);
        QCOMPARE(r["memory"]["model_state_bytes"].toInteger(),
                 static_cast<qint64>(core::computeMemory(s.memory).modelStateBytes));
        QCOMPARE(r["pipeline"]["makespan"].toDouble(), core::simulatePipeline(s.pipeline).makespan);
    }

    void reportBoundsLeaveOutTheHeavyParts()
    {
        // The default scenario: 4 x 12 pipeline passes, 7056 search candidates (docs/CLI.md).
        const core::Scenario s;
        app::ReportBounds bounds;
        bounds.comparedPasses = 48;
        bounds.searchCandidates = 7055;
        const QJsonObject r = app::buildReport(s, bounds);
        QVERIFY(r["pipeline"]["schedules"].isObject());
        QVERIFY(r["plan"]["search"].isNull());
        QVERIFY(r["plan"]["search_refused"].toString().contains("7055 candidates"));
        bounds.comparedPasses = 47;
        const QJsonObject fewer = app::buildReport(s, bounds);
        QVERIFY(fewer["pipeline"]["schedules"].isNull());
    }

    void reportTextReadsBackAsTheReport_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("default 64 x 256") << 0;
        QTest::newRow("128 x 512 e5m2") << 1; // 8192 scales: formatted in two halves
        QTest::newRow("explicit 3 x 4") << 2;
        // 777 x 300 scales: batches of 218 rows (65,536 / 300), the last of 123, each split
        // into two unequal halves
        QTest::newRow("777 x 300, blocks of 1") << 3;
    }

    void reportTextReadsBackAsTheReport()
    {
        // The printed report formats fp8.scales itself; read back, every number is the same.
        QFETCH(int, which);
        core::Scenario s;
        if (which == 1) {
            s.fp8.rows = 128;
            s.fp8.cols = 512;
            s.fp8.blockSize = 8;
            s.fp8.format = core::Fp8Format::E5M2;
        } else if (which == 2) {
            core::MatrixF m(3, 4);
            m << 0.5f, -1.25f, 3.0f, 1e-30f, 7.0f, 0.0f, -0.0f, 1e30f, 2.0f, 3.0f, 4.0f, 5.0f;
            s.fp8.values = m;
            s.fp8.blockSize = 2;
        } else if (which == 3) {
            s.fp8.rows = 777;
            s.fp8.cols = 300;
            s.fp8.blockSize = 1;
        }
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(app::reportJson(s), &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(doc.object(), app::buildReport(s));
    }
};

QTEST_GUILESS_MAIN(TstScenarioJson)
#include "tst_scenariojson.moc"
