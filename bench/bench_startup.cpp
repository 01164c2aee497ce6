// Cold start: how long ScaleLab takes from launch to its first painted window, against a bare
// Qt Charts window with one chart (startup_yardstick) on the same machine. Each program is
// started --runs times (20 unless told), the two in turn, and each run is timed from the launch
// until the program prints "painted" (ScaleLab does with SCALELAB_REPORT_FIRST_PAINT set); the
// program is then stopped. Prints the median, fastest and slowest of each and the ratio of the
// medians. A benchmark, not a test: run it on a quiet machine.
//
// Both programs are asked to end at their first paint (SCALELAB_EXIT_AT_FIRST_PAINT), so what
// the system counts for a finished child is the start alone: the benchmark also prints the
// median processor time (user and system, all threads) and the median count of page faults of
// a start. They say where a start's time goes: work the processor does, or memory touched for
// the first time, which costs far more on a virtual machine than on bare metal.
//
//   cmake --build --preset release --target bench_startup
//   ./build/release/bench/bench_startup [--runs N]
//
// ScaleLab starts as a new user's would: with an empty settings folder, so no saved session.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <sys/resource.h>
#include <vector>

namespace {

constexpr int kTimeoutMs = 60000; ///< a start slower than this is a failure, not a figure

/// Processor milliseconds and page faults, as the system counts them for finished children.
struct ChildUsage {
    double cpuMs = 0, faults = 0;

    static ChildUsage now()
    {
        rusage usage{};
        getrusage(RUSAGE_CHILDREN, &usage);
        const auto ms = [](const timeval& t) {
            return t.tv_sec * 1e3 + t.tv_usec / 1e3;
        };
        return {ms(usage.ru_utime) + ms(usage.ru_stime),
                static_cast<double>(usage.ru_minflt + usage.ru_majflt)};
    }

    ChildUsage operator-(const ChildUsage& earlier) const
    {
        return {cpuMs - earlier.cpuMs, faults - earlier.faults};
    }
};

/// One start: milliseconds from launch to "painted", and what the start used.
struct Start {
    double ms = 0;
    ChildUsage used;
};

/// `program`'s start, or nothing when it never said "painted".
std::optional<Start> timeOneStart(const QString& program, const QProcessEnvironment& environment)
{
    const ChildUsage before = ChildUsage::now();
    QProcess process;
    process.setProcessEnvironment(environment);
    process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QElapsedTimer timer;
    timer.start();
    process.start(program, {});
    std::optional<double> ms;
    while (!ms && timer.elapsed() < kTimeoutMs && process.state() != QProcess::NotRunning) {
        if (!process.canReadLine() && !process.waitForReadyRead(kTimeoutMs))
            break;
        while (process.canReadLine())
            if (process.readLine().trimmed() == "painted")
                ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    }
    process.kill(); // it has ended already, unless it never painted
    process.waitForFinished();
    if (!ms)
        return std::nullopt;
    return Start{*ms, ChildUsage::now() - before};
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    int runs = 20;
    const QStringList args = QCoreApplication::arguments();
    for (qsizetype i = 1; i + 1 < args.size(); ++i)
        if (args[i] == "--runs")
            runs = std::max(1, args[i + 1].toInt());
    QTemporaryDir settings; // no saved session: the defaults, as on a new user's first start
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (!environment.contains("QT_QPA_PLATFORM"))
        environment.insert("QT_QPA_PLATFORM", "offscreen");
    environment.insert("XDG_CONFIG_HOME", settings.path());
    environment.insert("SCALELAB_REPORT_FIRST_PAINT", "1");
    environment.insert("SCALELAB_EXIT_AT_FIRST_PAINT", "1");

    const struct {
        const char* name;
        QString program;
    } programs[] = {{"scalelab", QStringLiteral(SCALELAB_PROGRAM)},
                    {"yardstick", QStringLiteral(YARDSTICK_PROGRAM)}};
    std::vector<double> ms[2], cpuMs[2], faults[2];
    for (int run = 0; run < runs; ++run)
        for (int k = 0; k < 2; ++k) {
            const int which = (run + k) % 2; // the two in turn, each first half the time
            const std::optional<Start> t = timeOneStart(programs[which].program, environment);
            if (!t) {
                std::fprintf(stderr, "%s did not paint within %d s\n", programs[which].name,
                             kTimeoutMs / 1000);
                return 1;
            }
            ms[which].push_back(t->ms);
            cpuMs[which].push_back(t->used.cpuMs);
            faults[which].push_back(t->used.faults);
        }
    std::printf("%-10s %6s %10s %10s %10s %8s %12s\n", "program", "runs", "median ms", "fastest",
                "slowest", "cpu ms", "page faults");
    for (int which = 0; which < 2; ++which)
        std::printf("%-10s %6d %10.1f %10.1f %10.1f %8.1f %12.0f\n", programs[which].name, runs,
                    median(ms[which]), *std::min_element(ms[which].begin(), ms[which].end()),
                    *std::max_element(ms[which].begin(), ms[which].end()), median(cpuMs[which]),
                    median(faults[which]));
    std::printf("ScaleLab's median start is %.2f times the yardstick's\n",
                median(ms[0]) / median(ms[1]));
    return 0;
}
