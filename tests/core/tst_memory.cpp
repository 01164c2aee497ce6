// Memory accounting: Adam model state, saved activations, checkpointing.

#include "scalelab/core/memory.h"
#include "testhelpers.h"

#include <QTest>
#include <algorithm>
#include <numeric>

using namespace scalelab::core;

class TstMemory : public QObject {
    Q_OBJECT

private slots:
    void exerciseModelState()
    {
        // Exercise 41.1: one million parameters at 2 + 2 + 4 + 4 + 4 bytes.
        QCOMPARE(adamMemoryBytes(1'000'000), std::int64_t(16'000'000));
    }

    void exerciseActivations()
    {
        // Exercise 41.1: 8 tokens x 16 hidden x 12 layers at two bytes per value.
        QCOMPARE(activationMemoryBytes(8, 16, 12, 2), std::int64_t(3'072));
    }

    void adamRecipes_data()
    {
        QTest::addColumn<qint64>("w");
        QTest::addColumn<qint64>("g");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("o");
        QTest::addColumn<qint64>("bytesFor7B");
        QTest::newRow("mixed precision") << 2LL << 2LL << 4LL << 8LL << 112'000'000'000LL;
        QTest::newRow("pure fp32") << 4LL << 4LL << 0LL << 8LL << 112'000'000'000LL;
        QTest::newRow("bf16, 8-bit moments") << 2LL << 2LL << 4LL << 2LL << 70'000'000'000LL;
    }

    void adamRecipes()
    {
        QFETCH(qint64, w);
        QFETCH(qint64, g);
        QFETCH(qint64, m);
        QFETCH(qint64, o);
        QFETCH(qint64, bytesFor7B);
        QCOMPARE(adamMemoryBytes(7'000'000'000, w, g, m, o), bytesFor7B);
    }

    void checkpointed_data()
    {
        QTest::addColumn<qint64>("layers");
        QTest::addColumn<qint64>("segments");
        QTest::addColumn<qint64>("tensors");
        QTest::addColumn<qint64>("savedTensors");
        // The chapter's formula (one tensor per layer): segments + ceil(L / segments).
        QTest::newRow("12 layers, 3 segments") << 12LL << 3LL << 1LL << 3LL + 4LL;
        QTest::newRow("12 layers, 5 segments") << 12LL << 5LL << 1LL << 5LL + 3LL;
        QTest::newRow("one segment") << 12LL << 1LL << 1LL << 1LL + 12LL;
        QTest::newRow("every layer a segment") << 12LL << 12LL << 1LL << 12LL + 1LL;
        // CLI.md: the recomputed segment keeps all its tensors.
        QTest::newRow("32 layers, 8 segments, 16 tensors") << 32LL << 8LL << 16LL << 8LL + 4 * 16LL;
        QTest::newRow("33 layers, 8 segments, 3 tensors") << 33LL << 8LL << 3LL << 8LL + 5 * 3LL;
    }

    void checkpointed()
    {
        QFETCH(qint64, layers);
        QFETCH(qint64, segments);
        QFETCH(qint64, tensors);
        QFETCH(qint64, savedTensors);
        const qint64 tokens = 8, hidden = 16, bytes = 2;
        QCOMPARE(checkpointedActivationBytes(tokens, hidden, layers, segments, bytes, tensors),
                 tokens * hidden * bytes * savedTensors);
    }

    void optimalSegmentsIsTheBruteForceMinimum()
    {
        // Against a plain scan of every segment count, smallest count on a tie.
        for (std::int64_t layers = 1; layers <= 300; ++layers) {
            for (std::int64_t tensors : {1, 2, 3, 16}) {
                std::int64_t best = 1;
                for (std::int64_t s = 2; s <= layers; ++s)
                    if (checkpointedActivationBytes(1, 1, layers, s, 1, tensors)
                        < checkpointedActivationBytes(1, 1, layers, best, 1, tensors))
                        best = s;
                QCOMPARE(optimalSegments(layers, tensors), best);
            }
        }
    }

    void optimalSegmentsNearSqrt()
    {
        // For one tensor per layer the optimum of s + L/s is sqrt(L).
        QCOMPARE(optimalSegments(100, 1), std::int64_t(10));
        QCOMPARE(optimalSegments(12, 1), std::int64_t(3));
        // Huge layer counts stay exact and quick: the minimum is 2 sqrt(L) near sqrt(L).
        const std::int64_t big = 1'000'000'000'000LL;
        const std::int64_t s = optimalSegments(big, 1);
        QCOMPARE(s + (big + s - 1) / s, std::int64_t(2'000'000));
    }

    void recompute()
    {
        QCOMPARE(recomputedLayers(12, 3, 1), std::int64_t(9));
        QCOMPARE(recomputedLayers(12, 12, 1), std::int64_t(0));
        QCOMPARE(recomputedLayers(12, 3, 4), std::int64_t(12));
    }

    void computeDefaults()
    {
        const MemoryResult r = computeMemory(MemoryInputs{});
        QCOMPARE(r.modelStateBytes, std::int64_t(112'000'000'000));
        QCOMPARE(r.weightBytes + r.gradBytes + r.masterBytes + r.momentBytes, r.modelStateBytes);
        QCOMPARE(r.activationBytes, std::int64_t(4096) * 4096 * 32 * 2 * 16);
        QCOMPARE(r.checkpointedActivationBytes, std::int64_t(4096) * 4096 * 2 * (8 + 4 * 16));
        QCOMPARE(r.optimalSegments, optimalSegments(32, 16));
        QCOMPARE(r.recomputeFraction, 1.0);
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("field");
        QTest::newRow("parameters") << "memory.parameters";
        QTest::newRow("weight bytes") << "memory.weight_bytes";
        QTest::newRow("grad bytes") << "memory.grad_bytes";
        QTest::newRow("master bytes") << "memory.master_bytes";
        QTest::newRow("moment bytes") << "memory.moment_bytes";
        QTest::newRow("tokens") << "memory.tokens";
        QTest::newRow("hidden") << "memory.hidden";
        QTest::newRow("layers") << "memory.layers";
        QTest::newRow("bytes per value") << "memory.bytes_per_value";
        QTest::newRow("tensors per layer") << "memory.tensors_per_layer";
        QTest::newRow("segments") << "memory.segments";
    }

    void badInput()
    {
        QFETCH(QString, field);
        MemoryInputs in;
        const QString key = field.section('.', 1);
        if (key == "parameters")
            in.parameters = 0;
        if (key == "weight_bytes")
            in.weightBytes = -1;
        if (key == "grad_bytes")
            in.gradBytes = -1;
        if (key == "master_bytes")
            in.masterBytes = -1;
        if (key == "moment_bytes")
            in.momentBytes = -1;
        if (key == "tokens")
            in.tokens = 0;
        if (key == "hidden")
            in.hidden = 0;
        if (key == "layers")
            in.layers = 0;
        if (key == "bytes_per_value")
            in.bytesPerValue = 0;
        if (key == "tensors_per_layer")
            in.tensorsPerLayer = 0;
        if (key == "segments")
            in.segments = in.layers + 1;
        SCALELAB_VERIFY_INPUT_ERROR(computeMemory(in), field.toStdString());
    }

    void overflowIsRefusedNotWrapped()
    {
        MemoryInputs in;
        in.parameters = 1LL << 53;
        in.momentBytes = 1LL << 20;
        SCALELAB_VERIFY_INPUT_ERROR(computeMemory(in), "memory.parameters");
        in = MemoryInputs{};
        in.tokens = 1LL << 45; // 2^45 x 4096 x 32 x 2 x 16 = 2^67
        SCALELAB_VERIFY_INPUT_ERROR(computeMemory(in), "memory.tokens");
    }

    void segmentCountsToPlotAreEveryCountWhenFew()
    {
        const std::vector<std::int64_t> counts = segmentCountsToPlot(12, {3, 40});
        std::vector<std::int64_t> every(12);
        std::iota(every.begin(), every.end(), 1);
        QCOMPARE(counts, every); // 40 is past the layers: not plotted
    }

    void segmentCountsToPlotAreBoundedWhenMany()
    {
        // 10^8 layers: the chart once drew every count (12 GB and a minute); now a few thousand.
        const std::int64_t layers = 100'000'000;
        const std::vector<std::int64_t> counts =
            segmentCountsToPlot(layers, {123'456'789, 77'777, 5}, 1024, 1024);
        QVERIFY(counts.size() <= 1024 + 1024 + 3);
        QCOMPARE(counts.front(), std::int64_t(1));
        QCOMPARE(counts[1023], std::int64_t(1024));
        QCOMPARE(counts.back(), layers);
        QVERIFY(std::is_sorted(counts.begin(), counts.end()));
        QVERIFY(std::adjacent_find(counts.begin(), counts.end()) == counts.end());
        QVERIFY(std::binary_search(counts.begin(), counts.end(), 77'777));
        QVERIFY(!std::binary_search(counts.begin(), counts.end(), 123'456'789));
        // Evenly spaced past the dense part: no gap wider than one step of the span.
        std::int64_t widest = 0;
        for (std::size_t i = 1024; i < counts.size(); ++i)
            widest = std::max(widest, counts[i] - counts[i - 1]);
        QVERIFY(widest <= (layers - 1024) / 1024 + 1);
    }
};

QTEST_GUILESS_MAIN(TstMemory)
#include "tst_memory.moc"
