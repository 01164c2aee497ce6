// The command line through the real binary: report figures, exit codes and error lines.

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <csignal>
#include <functional>
#include <sys/resource.h>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run runScalelab(const QStringList& args, bool withoutDisplay = false,
                const std::function<void()>& inChild = {})
{
    QProcess p;
    if (inChild)
        p.setChildProcessModifier(inChild);
    if (withoutDisplay) {
        // As on a server: no display and no platform chosen; export must cope by itself.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("QT_QPA_PLATFORM");
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        p.setProcessEnvironment(env);
    }
    p.start(SCALELAB_BINARY, args);
    if (!p.waitForFinished(120'000))
        qFatal("scalelab did not finish");
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

QJsonObject reportOf(const Run& run)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(run.out, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("report is not JSON: %s", qPrintable(error.errorString()));
    return doc.object();
}

} // namespace

class TstCli : public QObject {
    Q_OBJECT

private slots:
    void reportWithDefaultsHasEverySection()
    {
        const Run run = runScalelab({"report"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.err, QByteArray());
        const QJsonObject report = reportOf(run);
        QCOMPARE(report.value("scalelab_report").toInt(), 1);
        const QMap<QString, QStringList> keys = {
            {"memory",
             {"model_state_bytes", "activation_bytes", "checkpointed_activation_bytes",
              "optimal_segments"}},
            {"zero",
             {"dp_bytes", "zero1_bytes", "zero2_bytes", "zero3_bytes",
              "ring_allreduce_bytes_per_rank"}},
            {"tensor_parallel", {"max_abs_difference", "shard_widths", "allreduce_bytes_per_rank"}},
            {"pipeline", {"bubble_fraction", "simulated_bubble_fraction", "makespan"}},
            {"experts", {"counts", "expert_load", "received_per_rank", "imbalance", "dropped"}},
            {"fp8",
             {"scales", "max_abs_error", "rmse", "per_tensor_rmse", "accumulation", "policy"}},
            {"plan",
             {"parameters", "active_parameters", "data_parallel", "microbatches", "stages",
              "peak_bytes_per_gpu", "fits", "bubble_fraction", "communication_bytes_per_gpu"}},
        };
        for (auto it = keys.begin(); it != keys.end(); ++it) {
            QVERIFY2(report.value(it.key()).isObject(), qPrintable(it.key()));
            for (const QString& key : it.value())
                QVERIFY2(report.value(it.key()).toObject().contains(key),
                         qPrintable(it.key() + '.' + key));
        }
        // Defaults of docs/CLI.md: 7e9 parameters x 16 bytes.
        QCOMPARE(report["memory"]["model_state_bytes"].toInteger(), 112'000'000'000LL);
        const QJsonObject stage = report["plan"]["stages"].toArray().at(0).toObject();
        for (const char* key :
             {"layers", "parameters", "model_state_bytes", "activation_bytes", "total_bytes"})
            QVERIFY2(stage.contains(key), key);
        for (const char* key : {"tensor_parallel", "data_parallel", "pipeline", "expert"})
            QVERIFY2(report["plan"]["communication_bytes_per_gpu"].toObject().contains(key), key);
        // The step time: its terms add up to the step, and the figures follow from it.
        const QJsonObject time = report["plan"]["step_time"].toObject();
        double terms = 0;
        for (const char* key : {"forward_seconds", "backward_seconds", "recompute_seconds",
                                "tensor_parallel_seconds", "expert_seconds", "bubble_seconds",
                                "pipeline_send_seconds", "data_parallel_exposed_seconds"})
            terms += time.value(key).toDouble();
        QVERIFY(time.value("step_seconds").toDouble() > 0);
        QVERIFY(std::abs(terms / time.value("step_seconds").toDouble() - 1) < 1e-9);
        QCOMPARE(time.value("gpu").toString(), QString("h100_80gb"));
        QVERIFY(time.value("mfu").toDouble() > 0 && time.value("mfu").toDouble() < 1);
        // 64 GPUs / (8 x 1) = 8 data-parallel ranks; 512 / (1 x 8) = 64 microbatches.
        QCOMPARE(report["plan"]["data_parallel"].toInt(), 8);
        QCOMPARE(report["plan"]["microbatches"].toInt(), 64);
        // The layout search: ten fitting layouts, fastest first, each with its keys and terms.
        const QJsonObject search = report["plan"]["search"].toObject();
        QVERIFY(search.value("fitting").toInt() >= 10);
        QVERIFY(search.value("enumerated").toInt() >= search.value("fitting").toInt());
        const QJsonArray best = search.value("best").toArray();
        QCOMPARE(best.size(), 10);
        for (qsizetype i = 0; i < best.size(); ++i) {
            const QJsonObject b = best.at(i).toObject();
            for (const char* key : {"t", "p", "v", "d", "ep", "micro_batch", "zero_stage",
                                    "sequence_parallel", "recompute"})
                QVERIFY2(b["layout"].toObject().contains(key), key);
            QVERIFY(!b.value("largest_term").toString().isEmpty());
            if (i > 0)
                QVERIFY(best.at(i - 1)["step_seconds"].toDouble() <= b["step_seconds"].toDouble());
        }
        QVERIFY(search.value("closest_failures").toArray().isEmpty());
        QCOMPARE(search.value("kept").toArray(), QJsonArray());
        // Generated FP8 data prints no dequantized matrix.
        QVERIFY(!report["fp8"].toObject().contains("dequantized"));
    }

    void reportOfTheZeroBubbleSchedules_data()
    {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<double>("bubbleTime");
        QTest::addColumn<double>("bubbleRate");
        QTest::addColumn<double>("makespan");
        // p = 4, m = 12, f = b = w = 1: Qi et al.'s (p-1)/m, (p-1)/(3m) and 0. The old schedules
        // run B + W = 2 as one backward, the chapter's exercise with b = 2.
        QTest::newRow("1f1b") << "1f1b" << 9.0 << 0.25 << 45.0;
        QTest::newRow("zb-h1") << "zb-h1" << 3.0 << 3.0 / 36.0 << 39.0;
        QTest::newRow("zb-h2") << "zb-h2" << 0.0 << 0.0 << 39.0;
        // The DualPipe README's (p/2-1)(F&B+B-3W) = 1 x (3 + 2 - 3) = 2 per device, over a
        // device's work m (f+b+w) = 36 (DualPipe) or 2m (f+b+w) = 72 (DualPipeV on 2 devices).
        QTest::newRow("dualpipe") << "dualpipe" << 2.0 << 2.0 / 36.0 << 38.0;
        QTest::newRow("dualpipev") << "dualpipev" << 2.0 << 2.0 / 72.0 << 74.0;
    }

    void reportOfTheZeroBubbleSchedules()
    {
        QFETCH(QString, schedule);
        QFETCH(double, bubbleTime);
        QFETCH(double, bubbleRate);
        QFETCH(double, makespan);
        QTemporaryDir dir;
        const QString file =
            writeFile(dir, "zb.json",
                      QString(R"({"pipeline": {"stages": 4, "microbatches": 12, "schedule": "%1",
                       "forward_time": 1, "backward_time": 1, "weight_time": 1}})")
                          .arg(schedule)
                          .toUtf8());
        const Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.err, QByteArray());
        const QJsonObject r = reportOf(run);
        QCOMPARE(r["pipeline"]["bubble_time"].toDouble(), bubbleTime);
        QCOMPARE(r["pipeline"]["bubble_rate"].toDouble(), bubbleRate);
        QCOMPARE(r["pipeline"]["makespan"].toDouble(), makespan);
        const bool dual = schedule.startsWith("dualpipe");
        QCOMPARE(r["pipeline"]["peak_in_flight"].toArray().at(0).toInt(),
                 schedule == "zb-h2" ? 7
                     : dual          ? 5
                                     : 4);
        // Per device: p + 1 activations and 2x parameters for the DualPipe schedules.
        const int devices = schedule == "dualpipev" ? 2 : 4;
        QCOMPARE(r["pipeline"]["devices"].toInt(), devices);
        QCOMPARE(r["pipeline"]["peak_activations"].toArray().size(), devices);
        QCOMPARE(r["pipeline"]["peak_activations"].toArray().at(0).toDouble(),
                 schedule == "zb-h2" ? 7.0
                     : dual          ? 5.0
                                     : 4.0);
        QCOMPARE(r["pipeline"]["parameters_per_device"].toDouble(), dual ? 2.0 : 1.0);
        // The comparison: every schedule at the same inputs, the README's table among them.
        const QJsonObject all = r["pipeline"]["schedules"].toObject();
        QCOMPARE(all.size(), 7);
        QCOMPARE(all["1f1b"]["bubble_time"].toDouble(), 9.0); // (p-1)(F+B), B = b + w
        QCOMPARE(all["zb-h1"]["bubble_time"].toDouble(), 3.0); // ZB1P (p-1)(F+B-2W)
        QCOMPARE(all["dualpipe"]["bubble_time"].toDouble(), 2.0);
        QCOMPARE(all["dualpipe"]["parameters_per_device"].toDouble(), 2.0);
        QCOMPARE(all["dualpipev"]["devices"].toInt(), 2);
        QCOMPARE(all[schedule]["bubble_time"].toDouble(), bubbleTime);
    }

    void reportRefusesNoOtherScheduleForTheComparison()
    {
        // At odd p DualPipe cannot run; the comparison says so with null, the rest is there.
        QTemporaryDir dir;
        const QString file = writeFile(
            dir, "odd.json", QByteArray(R"({"pipeline": {"stages": 3, "microbatches": 12}})"));
        const Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject report = reportOf(run);
        const QJsonObject all = report["pipeline"]["schedules"].toObject();
        QVERIFY(all["dualpipe"].isNull());
        QVERIFY(all["dualpipev"].isNull());
        QVERIFY(all["gpipe"].isObject());
        // Past 10^6 stages x microbatches the seven simulations are left out (the 30 s limit).
        const QString big = writeFile(
            dir, "big.json", QByteArray(R"({"pipeline": {"stages": 1000, "microbatches": 1001}})"));
        const Run large = runScalelab({"report", "--scenario", big});
        QCOMPARE(large.exitCode, 0);
        const QJsonObject bigReport = reportOf(large);
        QVERIFY(bigReport["pipeline"]["schedules"].isNull());
        QCOMPARE(bigReport["pipeline"]["devices"].toInt(), 1000);
    }

    void reportOfTheChaptersExercises()
    {
        QTemporaryDir dir;
        const QString file = writeFile(dir, "exercises.json", R"({
          "scalelab_scenario": 1,
          "memory": { "parameters": 1000000, "tokens": 8, "hidden": 16, "layers": 12,
                      "tensors_per_layer": 1, "segments": 3 },
          "zero": { "parameters": 1000, "ranks": 4 },
          "pipeline": { "stages": 4, "microbatches": 12, "schedule": "gpipe" },
          "experts": { "ranks": 2, "experts": 4,
                       "assignments": [[0, 1, 3], [2, 3, 2]], "expert_to_rank": [0, 0, 1, 1] },
          "fp8": { "format": "e4m3", "block_size": 4,
                   "values": [[0.5, -1.25, 3.0, 0.001, 0.01, 0.02, 0.03, 0.04]] }
        })");
        const Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.err, QByteArray());
        const QJsonObject r = reportOf(run);
        QCOMPARE(r["memory"]["model_state_bytes"].toInteger(), 16'000'000LL);
        QCOMPARE(r["memory"]["activation_bytes"].toInteger(), 3'072LL);
        // 8 x 16 x 2 x (3 + ceil(12/3)) = 1792.
        QCOMPARE(r["memory"]["checkpointed_activation_bytes"].toInteger(), 1'792LL);
        QCOMPARE(r["zero"]["dp_bytes"].toInteger(), 16'000LL);
        QCOMPARE(r["zero"]["zero1_bytes"].toInteger(), 7'000LL);
        QCOMPARE(r["zero"]["zero2_bytes"].toInteger(), 5'500LL);
        QCOMPARE(r["zero"]["zero3_bytes"].toInteger(), 4'000LL);
        QCOMPARE(r["pipeline"]["bubble_fraction"].toDouble(), 0.2);
        QCOMPARE(r["pipeline"]["simulated_bubble_fraction"].toDouble(), 0.2);
        QCOMPARE(r["pipeline"]["makespan"].toDouble(), 45.0); // (12 + 3) x (1 + 2)
        QCOMPARE(r["experts"]["counts"].toArray(),
                 (QJsonArray{QJsonArray{2, 1}, QJsonArray{0, 3}}));
        QCOMPARE(r["experts"]["dropped"].toInt(), 0);
        const QJsonArray scales = r["fp8"]["scales"].toArray();
        QCOMPARE(scales.size(), 1);
        QCOMPARE(scales.at(0).toArray().size(), 2);
        // float32(3.0f / 448.0f), printed so that it reads back exactly.
        QCOMPARE(static_cast<float>(scales.at(0).toArray().at(0).toDouble()), 3.0f / 448.0f);
        QCOMPARE(r["fp8"]["dequantized"].toArray().at(0).toArray().size(), 8);
    }

    void fractionalBytesPrintAsNumbers()
    {
        QTemporaryDir dir;
        const QString file =
            writeFile(dir, "z.json", R"({"zero": {"parameters": 1000, "ranks": 3}})");
        const Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject r = reportOf(run);
        QVERIFY(run.out.contains("\"zero1_bytes\": 8000"));
        QCOMPARE(r["zero"]["zero2_bytes"].toDouble(), 2000.0 + 14000.0 / 3.0);
    }

    void reportOfAKeptSearch()
    {
        // The search keeps t 8 and ZeRO-1 (the plan's own): every ranked layout has them.
        QTemporaryDir dir;
        QString file = writeFile(dir, "k.json", R"({"plan": {"search_keep":
            {"tensor_parallel": true, "zero_stage": true}}})");
        Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 0);
        QJsonObject search = reportOf(run).value("plan").toObject().value("search").toObject();
        QCOMPARE(search.value("kept").toArray(), (QJsonArray{"tensor_parallel", "zero_stage"}));
        const QJsonArray best = search.value("best").toArray();
        QVERIFY(!best.isEmpty());
        for (const QJsonValue& b : best) {
            QCOMPARE(b["layout"]["t"].toInt(), 8);
            QCOMPARE(b["layout"]["zero_stage"].toInt(), 1);
        }
        // A kept t of 16 is past the 8 GPUs of a node: nothing to search, and the failure says
        // that the keep is why.
        file = writeFile(dir, "k16.json", R"({"plan": {"tensor_parallel": 16,
            "search_keep": {"tensor_parallel": true}}})");
        run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 0);
        search = reportOf(run).value("plan").toObject().value("search").toObject();
        QCOMPARE(search.value("enumerated").toInt(), 0);
        QCOMPARE(search["closest_failures"][0]["constraint"].toString(),
                 QString("plan.search_keep"));
        // A keep that is not true or false is refused with its name.
        file = writeFile(dir, "bad.json", R"({"plan": {"search_keep": {"zero_stage": 1}}})");
        run = runScalelab({"report", "--scenario", file});
        QVERIFY(run.exitCode != 0);
        QVERIFY2(run.err.contains("plan.search_keep.zero_stage"), qPrintable(run.err));
    }

    void reportOfTheFp8Experiments()
    {
        // With 23 bits rounded to nearest, the limited accumulator is float32: the same arrays.
        QTemporaryDir dir;
        const QString file = writeFile(dir, "a.json", R"({"fp8": {
            "accumulation": {"k_min": 256, "k_max": 1024, "accumulator_bits": 23,
                             "rounding": "nearest", "outputs": 4, "promotion_interval": 64},
            "policy": {"steps": 8, "spike_step": 3, "history": 2}}})");
        const Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject r = reportOf(run);
        const QJsonObject a = r["fp8"]["accumulation"].toObject();
        QCOMPARE(a["k_values"].toArray(), (QJsonArray{256, 512, 1024}));
        QCOMPARE(a["rounding"].toString(), QString("nearest"));
        for (const char* table : {"max_relative_error", "rms_relative_error"}) {
            const QJsonObject t = a[table].toObject();
            QCOMPARE(t["limited"].toArray(), t["float32"].toArray());
            QCOMPARE(t["promoted"].toArray().size(), 3);
        }
        const QJsonObject p = r["fp8"]["policy"].toObject();
        QCOMPARE(p["amax"].toArray().size(), 8);
        for (const char* policy : {"delayed", "per_tensor", "fine"})
            for (const char* key : {"saturated", "flushed", "relative_error", "scale"})
                QCOMPARE(p["policies"][policy][key].toArray().size(), 8);
        // The spike of 10000 at step 3 saturates under delayed scaling only.
        QVERIFY(p["policies"]["delayed"]["saturated"][3].toInt() > 0);
        QCOMPARE(p["policies"]["per_tensor"]["saturated"][3].toInt(), 0);
        QCOMPARE(p["policies"]["fine"]["saturated"][3].toInt(), 0);
    }

    void badInput_data()
    {
        QTest::addColumn<QByteArray>("scenario");
        QTest::addColumn<QString>("named");
        QTest::newRow("unknown key")
            << QByteArray(R"({"memory": {"paramters": 5}})") << "memory.paramters";
        QTest::newRow("unknown section") << QByteArray(R"({"memroy": {}})") << "memroy";
        QTest::newRow("wrong type")
            << QByteArray(R"({"memory": {"layers": "32"}})") << "memory.layers";
        QTest::newRow("section not an object") << QByteArray(R"({"zero": 4})") << "zero";
        QTest::newRow("not whole") << QByteArray(R"({"zero": {"ranks": 7.5}})") << "zero.ranks";
        QTest::newRow("past 2^53")
            << QByteArray(R"({"zero": {"ranks": 9007199254740993}})") << "zero.ranks";
        QTest::newRow("negative") << QByteArray(R"({"tensor_parallel": {"seed": -1}})")
                                  << "tensor_parallel.seed";
        QTest::newRow("out of range") << QByteArray(R"({"zero": {"ranks": 0}})") << "zero.ranks";
        QTest::newRow("segments past layers")
            << QByteArray(R"({"memory": {"layers": 4, "segments": 5}})") << "memory.segments";
        QTest::newRow("version") << QByteArray(R"({"scalelab_scenario": 2})")
                                 << "scalelab_scenario";
        QTest::newRow("schedule") << QByteArray(R"({"pipeline": {"schedule": "zigzag"}})")
                                  << "pipeline.schedule";
        QTest::newRow("interleaved needs m % p == 0") << QByteArray(
            R"({"pipeline": {"schedule": "interleaved", "stages": 4, "microbatches": 6}})")
                                                      << "pipeline.microbatches";
        QTest::newRow("dualpipe needs even stages") << QByteArray(
            R"({"pipeline": {"schedule": "dualpipe", "stages": 5, "microbatches": 20}})")
                                                    << "pipeline.stages";
        QTest::newRow("dualpipe needs m >= 2p") << QByteArray(
            R"({"pipeline": {"schedule": "dualpipe", "stages": 4, "microbatches": 6}})")
                                                << "pipeline.microbatches";
        QTest::newRow("dualpipe needs even m") << QByteArray(
            R"({"pipeline": {"schedule": "dualpipe", "stages": 4, "microbatches": 11}})")
                                               << "pipeline.microbatches";
        QTest::newRow("dualpipev needs even stages") << QByteArray(
            R"({"pipeline": {"schedule": "dualpipev", "stages": 7, "microbatches": 20}})")
                                                     << "pipeline.stages";
        QTest::newRow("dualpipev needs m >= p") << QByteArray(
            R"({"pipeline": {"schedule": "dualpipev", "stages": 8, "microbatches": 7}})")
                                                << "pipeline.microbatches";
        QTest::newRow("time not finite")
            << QByteArray(R"({"pipeline": {"forward_time": 0}})") << "pipeline.forward_time";
        QTest::newRow("tp ranks past d_ff")
            << QByteArray(R"({"tensor_parallel": {"d_ff": 8, "ranks": 9}})")
            << "tensor_parallel.ranks";
        QTest::newRow("assignment id") << QByteArray(
            R"({"experts": {"ranks": 2, "experts": 4, "assignments": [[0, 1, 9], [2]]}})")
                                       << "experts.assignments[0][2]";
        QTest::newRow("assignment type")
            << QByteArray(R"({"experts": {"ranks": 2, "experts": 4, "assignments": [[0], ["a"]]}})")
            << "experts.assignments[1][0]";
        QTest::newRow("expert_to_rank") << QByteArray(
            R"({"experts": {"ranks": 2, "experts": 4, "expert_to_rank": [0, 0, 2, 1]}})")
                                        << "experts.expert_to_rank[2]";
        QTest::newRow("top_k past experts")
            << QByteArray(R"({"experts": {"experts": 4, "top_k": 5}})") << "experts.top_k";
        QTest::newRow("experts not a multiple of ranks")
            << QByteArray(R"({"experts": {"ranks": 3, "experts": 16}})") << "experts.experts";
        QTest::newRow("format") << QByteArray(R"({"fp8": {"format": "e3m4"}})") << "fp8.format";
        QTest::newRow("block size does not divide")
            << QByteArray(R"({"fp8": {"cols": 256, "block_size": 3}})") << "fp8.block_size";
        QTest::newRow("ragged values")
            << QByteArray(R"({"fp8": {"block_size": 2, "values": [[1, 2], [3]]}})")
            << "fp8.values[1]";
        QTest::newRow("plan layout")
            << QByteArray(R"({"plan": {"gpus": 64, "tensor_parallel": 8, "global_batch": 500}})")
            << "plan.global_batch";
        QTest::newRow("plan heads")
            << QByteArray(R"({"plan": {"model": {"heads": 33}}})") << "plan.model.heads";
        QTest::newRow("accumulation too large")
            << QByteArray(R"({"fp8": {"accumulation": {"outputs": 64, "k_max": 65536}}})")
            << "fp8.accumulation.outputs";
        QTest::newRow("accumulation rounding")
            << QByteArray(R"({"fp8": {"accumulation": {"rounding": "stochastic"}}})")
            << "fp8.accumulation.rounding";
        QTest::newRow("accumulation K range")
            << QByteArray(R"({"fp8": {"accumulation": {"k_min": 512, "k_max": 256}}})")
            << "fp8.accumulation.k_max";
        QTest::newRow("policy spike")
            << QByteArray(R"({"fp8": {"policy": {"spike": 0}}})") << "fp8.policy.spike";
        QTest::newRow("policy too large")
            << QByteArray(R"({"fp8": {"policy": {"steps": 4096, "rows": 4096}}})")
            << "fp8.policy.steps";
        QTest::newRow("value past float32")
            << QByteArray(R"({"fp8": {"block_size": 2, "values": [[1, 1e39]]}})")
            << "fp8.values[0][1]";
    }

    void badInput()
    {
        QFETCH(QByteArray, scenario);
        QFETCH(QString, named);
        QTemporaryDir dir;
        const QString file = writeFile(dir, "bad.json", scenario);
        const Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(run.out, QByteArray()); // nothing on stdout on error
        QVERIFY2(run.err.endsWith('\n') && run.err.count('\n') == 1, run.err.constData());
        QVERIFY2(run.err.contains((": " + named + ": ").toUtf8()), run.err.constData());
        QVERIFY2(run.err.contains(file.toUtf8()), run.err.constData());
    }

    void badFile_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QByteArray>("says");
        QTest::newRow("missing") << "missing" << QByteArray(".json: no such file\n");
        QTest::newRow("folder") << "folder" << QByteArray("not a folder");
        QTest::newRow("malformed JSON") << "malformed" << QByteArray("line 2, column");
        QTest::newRow("not an object") << "array" << QByteArray("JSON object");
    }

    void badFile()
    {
        QFETCH(QString, kind);
        QFETCH(QByteArray, says);
        QTemporaryDir dir;
        QString file = dir.filePath("absent.json");
        if (kind == "folder")
            file = dir.path();
        if (kind == "malformed")
            file = writeFile(dir, "m.json", "{\n  \"memory\": {\"layers\": 3,}\n}");
        if (kind == "array")
            file = writeFile(dir, "a.json", "[1, 2]");
        const Run run = runScalelab({"report", "--scenario", file});
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(run.out, QByteArray());
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains(says), run.err.constData());
    }

    void badCommandLine_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("says");
        QTest::newRow("unknown command") << QStringList{"reprot"} << QByteArray("reprot");
        QTest::newRow("unknown option") << QStringList{"report", "--fast"} << QByteArray("--fast");
        QTest::newRow("option without value")
            << QStringList{"report", "--scenario"} << QByteArray("--scenario");
        QTest::newRow("export option on report")
            << QStringList{"report", "--out", "x"} << QByteArray("--out");
        QTest::newRow("bad format")
            << QStringList{"export", "--out", "x", "--format", "gif"} << QByteArray("--format");
        QTest::newRow("bad size") << QStringList{"export", "--out", "x", "--size", "big"}
                                  << QByteArray("--size");
        QTest::newRow("bad background")
            << QStringList{"export", "--out", "x", "--background", "pink"}
            << QByteArray("--background");
        QTest::newRow("bad tab") << QStringList{"export", "--out", "x", "--tab", "gantt"}
                                 << QByteArray("--tab");
        QTest::newRow("export without --out") << QStringList{"export"} << QByteArray("--out");
    }

    void badCommandLine()
    {
        QFETCH(QStringList, args);
        QFETCH(QByteArray, says);
        const Run run = runScalelab(args);
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(run.out, QByteArray());
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains(says), run.err.constData());
    }

    void bareFileIsTheScenario()
    {
        // The desktop file's `scalelab %f`: a path alone opens the window on that scenario, so
        // a file that is not there is bad input about the file, not an unknown command.
        QTemporaryDir dir;
        const Run run = runScalelab({dir.filePath("absent.scalelab.json")});
        QCOMPARE(run.exitCode, 2);
        // The window's path (as with --scenario FILE) may let Qt's start-up notes through.
        QVERIFY2(run.err.endsWith("absent.scalelab.json: no such file\n"), run.err.constData());
    }

    void exportTheMemoryTab()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("charts"); // created by export
        const Run run = runScalelab({"export", "--tab", "memory", "--out", out}, true);
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.err, QByteArray());
        QStringList expected;
        for (const char* chart : {"memory-budget", "memory-checkpointing"})
            for (const char* format : {"png", "svg", "pdf"})
                expected << QDir(out).filePath(QString("%1.%2").arg(chart, format));
        QCOMPARE(QString::fromUtf8(run.out).split('\n', Qt::SkipEmptyParts), expected);
        for (const QString& path : expected)
            QVERIFY2(QFileInfo(path).size() > 1000, qPrintable(path));
        QCOMPARE(QImage(QDir(out).filePath("memory-budget.png")).size(), QSize(1600, 1000));
    }

    void exportThePlanWithItsConfigurations_data()
    {
        QTest::addColumn<QStringList>("tabOption");
        QTest::newRow("every tab") << QStringList{};
        QTest::newRow("--tab plan") << QStringList{"--tab", "plan"};
    }

    void exportThePlanWithItsConfigurations()
    {
        QFETCH(QStringList, tabOption);
        QTemporaryDir dir;
        const QString file = writeFile(dir, "plan.json", R"({"plan": {"zero_stage": 1,
            "gpus": 128, "tensor_parallel": 4, "pipeline_parallel": 2, "global_batch": 256}})");
        const Run run = runScalelab(QStringList{"export", "--scenario", file, "--format", "svg",
                                                "--out", dir.filePath("out")}
                                    + tabOption);
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.err, QByteArray());
        const QStringList lines = QString::fromUtf8(run.out).split('\n', Qt::SkipEmptyParts);
        const QDir out(dir.filePath("out"));
        QVERIFY(lines.contains(out.filePath("plan-deepspeed.json")));
        QVERIFY(lines.contains(out.filePath("plan-megatron.txt")));
        if (!tabOption.isEmpty()) {
            // The plan tab alone: its five charts (memory, recomputation, traffic, the step's
            // terms, the search's scatter) and the two configurations, nothing else.
            QStringList written = out.entryList(QDir::Files, QDir::Name);
            QCOMPARE(written,
                     (QStringList{"plan-communication.svg", "plan-deepspeed.json",
                                  "plan-megatron.txt", "plan-memory.svg", "plan-recompute.svg",
                                  "plan-search.svg", "plan-time.svg"}));
            QCOMPARE(lines.size(), 7);
        }
        QFile json(dir.filePath("out/plan-deepspeed.json"));
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonObject ds = QJsonDocument::fromJson(json.readAll()).object();
        QCOMPARE(ds["zero_optimization"]["stage"].toInt(), 1);
        // 128 GPUs / (4 x 2) = 16 data-parallel ranks; 256 / (1 x 16) = 16 accumulation steps.
        QCOMPARE(ds["train_micro_batch_size_per_gpu"].toInt(), 1);
        QCOMPARE(ds["gradient_accumulation_steps"].toInt(), 16);
        QFile args(dir.filePath("out/plan-megatron.txt"));
        QVERIFY(args.open(QIODevice::ReadOnly));
        const QByteArray text = args.readAll();
        QVERIFY(text.contains("--tensor-model-parallel-size 4"));
        QVERIFY(text.contains("--pipeline-model-parallel-size 2"));
        QVERIFY(text.contains("--global-batch-size 256"));
        // One argument a line, ending in exactly one newline, so it pastes into a shell script.
        QVERIFY(text.endsWith("--global-batch-size 256\n"));
    }

    void exportFormatAndSize()
    {
        QTemporaryDir dir;
        const Run run =
            runScalelab({"export", "--out", dir.path(), "--format", "png", "--size", "800x500"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.err, QByteArray());
        const QStringList files = QDir(dir.path()).entryList(QDir::Files);
        QVERIFY(files.contains("memory-budget.png"));
        for (const QString& f : files) {
            if (f.startsWith("plan-") && (f.endsWith(".json") || f.endsWith(".txt")))
                continue; // the plan's DeepSpeed and Megatron configurations
            QVERIFY(f.endsWith(".png"));
            QCOMPARE(QImage(dir.filePath(f)).size(), QSize(800, 500));
        }
    }

    void exportOnTransparentWithACaption()
    {
        QTemporaryDir dir;
        const Run plain = runScalelab(
            {"export", "--tab", "memory", "--format", "png", "--out", dir.filePath("plain")});
        const Run clear =
            runScalelab({"export", "--tab", "memory", "--format", "png", "--out",
                         dir.filePath("clear"), "--background", "transparent", "--caption"});
        QCOMPARE(plain.exitCode, 0);
        QCOMPARE(clear.exitCode, 0);
        const QImage white(dir.filePath("plain/memory-budget.png"));
        const QImage transparent(dir.filePath("clear/memory-budget.png"));
        QCOMPARE(white.pixelColor(2, 2), QColor(Qt::white));
        QCOMPARE(transparent.pixelColor(2, 2).alpha(), 0);
        QCOMPARE(transparent.size(), QSize(1600, 1000));
        // The caption takes the bottom strip: something is drawn there that the plain export
        // leaves empty.
        int captionPixels = 0;
        for (int x = 0; x < 1600; ++x)
            if (transparent.pixelColor(x, 985).alpha() > 0)
                ++captionPixels;
        QVERIFY(captionPixels > 0);
    }

    void exportToAnUnwritableFolder()
    {
        QTemporaryDir dir;
        QFile blocker(dir.filePath("file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        const QString out = dir.filePath("file/charts"); // below a regular file: cannot exist
        const Run run = runScalelab({"export", "--tab", "memory", "--out", out});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.out, QByteArray());
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains(out.toUtf8()), run.err.constData());
        // The line says why, in the system's words.
        QVERIFY2(run.err.endsWith(": Not a directory\n"), run.err.constData());
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot),
                 QStringList{"file"});
    }

    void exportOntoAFullDisk()
    {
        // No file may grow past 64 KiB, as on a full disk: writes fail with their reason. One
        // line says which file and why (the PNG encoder once added a line of its own), and no
        // chart is left behind, whole or in part.
        QTemporaryDir dir;
        const QString out = dir.filePath("charts");
        const Run run = runScalelab(
            {"export", "--tab", "memory", "--format", "png", "--size", "1600x1000", "--out", out},
            false, [] {
                const rlimit limit{64 * 1024, 64 * 1024};
                setrlimit(RLIMIT_FSIZE, &limit);
                signal(SIGXFSZ, SIG_IGN);
            });
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.out, QByteArray());
        QVERIFY2(run.err.count('\n') == 1, run.err.constData());
        QVERIFY2(run.err.startsWith("scalelab: cannot write " + out.toUtf8()), run.err.constData());
        QVERIFY2(run.err.endsWith(": File too large\n"), run.err.constData());
        QCOMPARE(QDir(out).entryList(QDir::Files | QDir::NoDotAndDotDot), QStringList());
    }

    void exportWithABadScenario()
    {
        QTemporaryDir dir;
        const QString file = writeFile(dir, "bad.json", R"({"memory": {"segments": 0}})");
        const Run run = runScalelab({"export", "--scenario", file, "--out", dir.filePath("o")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains("memory.segments"));
        QVERIFY(!QFileInfo::exists(dir.filePath("o")));
    }

    void windowWithABadLesson()
    {
        // The lesson is read before any window opens: one line with the file and the JSON path.
        QTemporaryDir dir;
        const QString file = writeFile(dir, "bad.lesson.json", R"({"title": "t", "steps": [
            {"tab": "memory", "narration": "n"},
            {"tab": "memory", "narration": "n", "scenario": {"memory": {"segments": 0}}}]})");
        const Run run = runScalelab({"--lesson", file});
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.startsWith("scalelab: " + file.toUtf8()
                                    + ": steps[1].scenario.memory.segments: "),
                 run.err.constData());
        const Run missing = runScalelab({"--lesson", dir.filePath("none.json")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.contains("no such file"));
        // --lesson belongs to the window only.
        QCOMPARE(runScalelab({"report", "--lesson", file}).exitCode, 2);
    }

    void lessonHandout()
    {
        // Each step's charts from that step's scenario, and one PDF page per step plus answers.
        QTemporaryDir dir;
        const QString file = writeFile(dir, "two.lesson.json", R"({"title": "Two", "steps": [
            {"tab": "pipeline", "narration": "Bubble {{bubble}}",
             "scenario": {"pipeline": {"stages": 4, "microbatches": 12}},
             "prediction": {"question": "Bubble?", "answer": 20, "unit": "%"}},
            {"tab": "zero", "narration": "Ranks {{ranks}}", "scenario": {"zero": {"ranks": 8}}}]})");
        const QString out = dir.filePath("handout");
        const Run run = runScalelab({"lesson", file, "--out", out, "--format", "svg"}, true);
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.err.isEmpty(), run.err.constData());
        QVERIFY(QFileInfo::exists(out + "/step-01-pipeline-gantt.svg"));
        QVERIFY(QFileInfo::exists(out + "/step-02-zero-ring.svg"));
        QVERIFY(!QFileInfo::exists(out + "/step-01-zero-ring.svg")); // only the step's own tab
        QVERIFY(run.out.contains("lesson.pdf"));
        QFile pdf(out + "/lesson.pdf");
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray bytes = pdf.readAll();
        QCOMPARE(bytes.count("/Type /Page\n"), qsizetype(3)); // two steps and the answers
        // A bad lesson: exit 2, one line with the JSON path, nothing written.
        const QString bad = writeFile(dir, "bad.lesson.json", R"({"title": "t", "steps": [
            {"tab": "pipeline", "narration": "n", "prediction": {"question": "q", "answer": "x"}}]})");
        const Run refused = runScalelab({"lesson", bad, "--out", dir.filePath("no")}, true);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains(": steps[0].prediction.answer: expected"),
                 refused.err.constData());
        QVERIFY(!QFileInfo::exists(dir.filePath("no")));
        QCOMPARE(runScalelab({"lesson", "--out", out}).exitCode, 2); // no FILE
        QCOMPARE(runScalelab({"lesson", file}).exitCode, 2); // no --out
    }

    void helpAndVersion()
    {
        const Run help = runScalelab({"--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("scalelab report"));
        // The help's list of tabs is exactly the report's sections: no tab is left out.
        const QRegularExpression tabsLine(QStringLiteral("^Tabs: (.*)\\.$"),
                                          QRegularExpression::MultilineOption);
        const QRegularExpressionMatch match = tabsLine.match(QString::fromUtf8(help.out));
        QVERIFY(match.hasMatch());
        QStringList listed = match.captured(1).split(QStringLiteral(", "));
        const Run report = runScalelab({"report"});
        QCOMPARE(report.exitCode, 0);
        QStringList sections = QJsonDocument::fromJson(report.out).object().keys();
        sections.removeAll(QStringLiteral("scalelab_report"));
        listed.sort();
        sections.sort();
        QCOMPARE(listed, sections);
        const Run version = runScalelab({"--version"});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.startsWith("scalelab "));
    }
};

QTEST_MAIN(TstCli)
#include "tst_cli.moc"
