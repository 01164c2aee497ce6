// The chapter's exercises: their set-up scenarios, answer reading and checking against core.

#include "exercises.h"
#include "report.h"

#include <QJsonArray>
#include <QTest>

using namespace scalelab;

class TstExercises : public QObject {
    Q_OBJECT

private slots:
    void fourExercisesThatSetUp()
    {
        const QList<app::Exercise> exercises = app::loadExercises();
        QCOMPARE(exercises.size(), 4);
        for (const app::Exercise& e : exercises) {
            QVERIFY(!e.title.isEmpty());
            QVERIFY(!e.questions.isEmpty());
            // Every set-up is a valid scenario, and every checked question has a figure.
            const QJsonObject report = app::buildReport(app::exerciseScenario(e));
            for (const app::ExerciseQuestion& q : e.questions) {
                QVERIFY(!q.solution.isEmpty());
                if (!q.report.isEmpty())
                    QVERIFY2(!app::reportValue(report, q.report).isUndefined(),
                             qPrintable(q.report));
            }
        }
    }

    void amounts_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<double>("value");
        QTest::newRow("plain") << "16000000"
                               << "bytes" << 16e6;
        QTest::newRow("separators") << "16,000,000"
                                    << "bytes" << 16e6;
        QTest::newRow("exponent") << "1.6e7"
                                  << "bytes" << 16e6;
        QTest::newRow("MB") << "16 MB"
                            << "bytes" << 16e6;
        QTest::newRow("MiB") << "3 KiB"
                             << "bytes" << 3072.0;
        QTest::newRow("bytes word") << "3072 bytes"
                                    << "bytes" << 3072.0;
        QTest::newRow("B") << "3072B"
                           << "bytes" << 3072.0;
        QTest::newRow("percent") << "20%"
                                 << "fraction" << 0.2;
        QTest::newRow("ratio") << "3/15"
                               << "fraction" << 0.2;
        QTest::newRow("decimal") << "0.2"
                                 << "fraction" << 0.2;
        QTest::newRow("count suffix") << "1.5K"
                                      << "number" << 1500.0;
    }

    void amounts()
    {
        QFETCH(QString, text);
        QFETCH(QString, kind);
        QFETCH(double, value);
        const auto parsed = app::parseAmount(text, kind);
        QVERIFY2(parsed.has_value(), qPrintable(text));
        QCOMPARE(*parsed, value);
    }

    void unreadableAmounts()
    {
        for (const char* text : {"", "sixteen", "16 parsecs", "1/0", "16 MB extra"})
            QVERIFY2(!app::parseAmount(text, "bytes"), text);
        QVERIFY(!app::parseAmount("16 MB", "fraction")); // a byte unit is not a fraction
    }

    void checksAgainstTheCore_data()
    {
        QTest::addColumn<int>("exercise");
        QTest::addColumn<int>("question");
        QTest::addColumn<QString>("answer");
        QTest::addColumn<bool>("correct");
        QTest::newRow("41.1 model state") << 0 << 0 << "16 MB" << true;
        QTest::newRow("41.1 model state, exponent") << 0 << 0 << "1.6e7" << true;
        QTest::newRow("41.1 model state, 12 bytes each") << 0 << 0 << "12000000" << false;
        QTest::newRow("41.1 activations") << 0 << 1 << "3072" << true;
        QTest::newRow("41.1 activations, 3 KiB") << 0 << 1 << "3 KiB" << true;
        QTest::newRow("41.1 activations, 3 kB") << 0 << 1 << "3 kB" << false;
        QTest::newRow("41.2 ring") << 1 << 0 << "3000" << true;
        QTest::newRow("41.2 DP") << 1 << 1 << "16000" << true;
        QTest::newRow("41.2 ZeRO-1") << 1 << 2 << "7000" << true;
        QTest::newRow("41.2 ZeRO-2") << 1 << 3 << "5.5 kB" << true;
        QTest::newRow("41.2 ZeRO-3") << 1 << 4 << "4000" << true;
        QTest::newRow("41.2 ZeRO-3 wrong") << 1 << 4 << "16000" << false;
        QTest::newRow("41.3 shard") << 2 << 0 << "16" << true;
        QTest::newRow("41.3 all-reduce") << 2 << 1 << "384" << true;
        QTest::newRow("41.4 bubble") << 3 << 0 << "20%" << true;
        QTest::newRow("41.4 bubble, ratio") << 3 << 0 << "1/5" << true;
        QTest::newRow("41.4 bubble, Megatron's") << 3 << 0 << "0.25" << false;
        QTest::newRow("41.4 counts") << 3 << 1 << "[[2,1],[0,3]]" << true;
        QTest::newRow("41.4 counts, rows") << 3 << 1 << "2 1; 0 3" << true;
        QTest::newRow("41.4 counts, transposed") << 3 << 1 << "[[2,0],[1,3]]" << false;
    }

    void checksAgainstTheCore()
    {
        QFETCH(int, exercise);
        QFETCH(int, question);
        QFETCH(QString, answer);
        QFETCH(bool, correct);
        const app::Exercise e = app::loadExercises().at(exercise);
        const QJsonObject report = app::buildReport(app::exerciseScenario(e));
        const app::AnswerCheck check = app::checkAnswer(e.questions.at(question), answer, report);
        QVERIFY(check.understood);
        QCOMPARE(check.correct, correct);
        if (!correct)
            QVERIFY(check.message.contains(e.questions.at(question).hint));
    }

    void wordsAreNotChecked()
    {
        const app::Exercise e = app::loadExercises().at(2);
        const app::AnswerCheck check = app::checkAnswer(e.questions.at(2), "because of blocks",
                                                        app::buildReport(app::exerciseScenario(e)));
        QVERIFY(!check.understood);
        QVERIFY(!check.correct);
    }
};

QTEST_GUILESS_MAIN(TstExercises)
#include "tst_exercises.moc"
