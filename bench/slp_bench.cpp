// slp_bench: the load generator of SLP's three-way benchmark.
//
// One Qt event loop drives raw non-blocking sockets (QSocketNotifier, no QTcpSocket: the
// generator shares the machine's two cores with the proxy it measures, so it stays lean).
// The same load goes, interleaved, direct to the upstream, through nginx and through every
// slp instance given; the program prints a table with the issue's targets and writes JSON.
// bench/run.sh starts the upstreams and proxies and calls this; see bench/README.md.

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QTimer>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

qint64 nowNs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double selfCpuSeconds()
{
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void raiseFileLimit()
{
    // 2,000 concurrent streams need more descriptors than the usual soft limit of 1,024.
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

// ---------------------------------------------------------------------------------------
// Where to send: an IPv4 loopback endpoint.

struct Endpoint
{
    QByteArray hostPort; // for the Host header
    sockaddr_in addr{};
};

std::optional<Endpoint> parseEndpoint(const QString &text)
{
    const qsizetype colon = text.lastIndexOf(':');
    if (colon <= 0)
        return std::nullopt;
    bool ok = false;
    const uint port = text.mid(colon + 1).toUInt(&ok);
    if (!ok || port == 0 || port > 65535)
        return std::nullopt;
    Endpoint ep;
    ep.hostPort = text.toLatin1();
    ep.addr.sin_family = AF_INET;
    ep.addr.sin_port = htons(static_cast<quint16>(port));
    if (::inet_pton(AF_INET, text.left(colon).toLatin1().constData(), &ep.addr.sin_addr) != 1)
        return std::nullopt;
    return ep;
}

// ---------------------------------------------------------------------------------------
// A proxy's processes, read from /proc: CPU (utime+stime of the process and its children,
// e.g. nginx's workers) and memory (VmRSS now, VmHWM since the last reset).

class ProcSet
{
public:
    ProcSet() = default;
    explicit ProcSet(int root)
    {
        if (root <= 0)
            return;
        m_pids << root;
        // Direct children (nginx's workers), found once by scanning /proc for the parent id.
        const QStringList entries = QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        for (const QString &e : entries) {
            bool ok = false;
            const int pid = e.toInt(&ok);
            if (ok && pid != root && statField(pid, 4) == root)
                m_pids << pid;
        }
    }

    bool isEmpty() const { return m_pids.isEmpty(); }
    const QList<int> &pids() const { return m_pids; }

    double cpuSeconds() const
    {
        static const double tick = double(::sysconf(_SC_CLK_TCK));
        qint64 ticks = 0;
        for (int pid : m_pids)
            ticks += statField(pid, 14) + statField(pid, 15);
        return double(ticks) / tick;
    }

    void resetPeak() const
    {
        // "5" resets VmHWM to the current RSS (Linux 4.0+).
        for (int pid : m_pids) {
            QFile f(QStringLiteral("/proc/%1/clear_refs").arg(pid));
            if (f.open(QIODevice::WriteOnly))
                f.write("5");
        }
    }

    qint64 statusKb(const char *key) const
    {
        qint64 sum = 0;
        for (int pid : m_pids) {
            QFile f(QStringLiteral("/proc/%1/status").arg(pid));
            if (!f.open(QIODevice::ReadOnly))
                continue;
            const QList<QByteArray> lines = f.readAll().split('\n');
            for (const QByteArray &line : lines) {
                if (line.startsWith(key))
                    sum += line.mid(qstrlen(key)).trimmed().split(' ').value(0).toLongLong();
            }
        }
        return sum;
    }

private:
    // Field n (1-based, as in proc(5)) of /proc/PID/stat.
    static qint64 statField(int pid, int n)
    {
        QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
        if (!f.open(QIODevice::ReadOnly))
            return -1;
        const QByteArray s = f.readAll();
        const qsizetype close = s.lastIndexOf(')');
        if (close < 0)
            return -1;
        const QList<QByteArray> rest = s.mid(close + 2).split(' ');
        return rest.value(n - 3).toLongLong();
    }

    QList<int> m_pids;
};

// ---------------------------------------------------------------------------------------
// One HTTP/1.1 client connection: keep-alive, one request at a time, Content-Length or
// chunked or close-delimited responses, SSE event boundaries ("\n\n") time-stamped.

class Conn
{
public:
    Conn(const Endpoint &ep, bool recordEvents) : m_ep(ep), m_recordEvents(recordEvents) {}
    ~Conn() { closeSocket(); }
    Conn(const Conn &) = delete;
    Conn &operator=(const Conn &) = delete;

    // Called once per request, when the response ended or the exchange failed.
    std::function<void(Conn &)> onDone;

    // Results of the last request.
    int status = 0;
    bool failed = false;
    qint64 startNs = 0;
    qint64 endNs = 0;
    qint64 bodyBytes = 0;
    std::vector<qint64> eventNs;

    void request(const QByteArray &head, const QByteArray &body)
    {
        status = 0;
        failed = false;
        bodyBytes = 0;
        eventNs.clear();
        m_state = State::Head;
        m_in.clear();
        m_lastNl = false;
        m_crlfSeen = 0;
        m_out.clear();
        if (body.size() <= 64 * 1024) {
            m_out << head + body; // one write, one segment: like any real client
        } else {
            m_out << head;
            m_out << body; // shared, not copied
        }
        m_outOffset = 0;
        m_active = true;
        startNs = nowNs();
        if (m_fd < 0 && !openSocket()) {
            fail();
            return;
        }
        if (m_connected)
            flush();
    }

    void closeSocket()
    {
        if (m_readN) {
            m_readN->setEnabled(false);
            m_readN.release()->deleteLater();
        }
        if (m_writeN) {
            m_writeN->setEnabled(false);
            m_writeN.release()->deleteLater();
        }
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
        m_connected = false;
    }

private:
    enum class State
    {
        Head,
        Length,
        ChunkSize,
        ChunkData,
        ChunkCrlf,
        Trailer,
        UntilClose,
        Done
    };

    bool openSocket()
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (m_fd < 0)
            return false;
        const int one = 1;
        ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const int rc =
            ::connect(m_fd, reinterpret_cast<const sockaddr *>(&m_ep.addr), sizeof m_ep.addr);
        if (rc < 0 && errno != EINPROGRESS) {
            ::close(m_fd);
            m_fd = -1;
            return false;
        }
        m_connected = rc == 0;
        m_readN = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Read);
        QObject::connect(m_readN.get(), &QSocketNotifier::activated, m_readN.get(),
                         [this] { onReadable(); });
        m_writeN = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Write);
        m_writeN->setEnabled(!m_connected);
        QObject::connect(m_writeN.get(), &QSocketNotifier::activated, m_writeN.get(),
                         [this] { onWritable(); });
        return true;
    }

    void onWritable()
    {
        if (!m_connected) {
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(m_fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
                fail();
                return;
            }
            m_connected = true;
        }
        flush();
    }

    void flush()
    {
        while (!m_out.isEmpty()) {
            const QByteArray &piece = m_out.first();
            const ssize_t n = ::send(m_fd, piece.constData() + m_outOffset,
                                     size_t(piece.size() - m_outOffset), MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    m_writeN->setEnabled(true);
                    return;
                }
                if (errno == EINTR)
                    continue;
                fail();
                return;
            }
            m_outOffset += n;
            if (m_outOffset == piece.size()) {
                m_out.removeFirst();
                m_outOffset = 0;
            }
        }
        if (m_writeN)
            m_writeN->setEnabled(false);
    }

    void onReadable()
    {
        static char buf[256 * 1024];
        for (;;) {
            const ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
            if (n > 0) {
                if (!m_active)
                    continue; // unsolicited bytes on an idle connection: ignore
                const qint64 t = nowNs();
                feed(buf, size_t(n), t);
                if (m_state == State::Done) {
                    finish(t);
                    return; // the callback may have reused or closed this connection
                }
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return;
            if (n < 0 && errno == EINTR)
                continue;
            // EOF or error.
            if (m_active && m_state == State::UntilClose) {
                m_state = State::Done;
                closeSocket();
                finish(nowNs());
                return;
            }
            if (m_active) {
                fail();
                return;
            }
            closeSocket(); // the server closed an idle keep-alive connection
            return;
        }
    }

    void finish(qint64 t)
    {
        endNs = t;
        m_active = false;
        if (m_closeAfter)
            closeSocket();
        if (onDone)
            onDone(*this);
    }

    void fail()
    {
        failed = true;
        closeSocket();
        const bool wasActive = m_active;
        m_active = false;
        endNs = nowNs();
        if (wasActive && onDone)
            onDone(*this);
    }

    void scanEvents(const char *p, size_t n, qint64 t)
    {
        if (!m_recordEvents)
            return;
        const char *end = p + n;
        while (p < end) {
            if (m_lastNl) {
                m_lastNl = false;
                if (*p == '\n') {
                    eventNs.push_back(t);
                    ++p;
                    continue;
                }
            }
            const void *nl = std::memchr(p, '\n', size_t(end - p));
            if (!nl)
                return;
            p = static_cast<const char *>(nl) + 1;
            if (p < end && *p == '\n') {
                eventNs.push_back(t);
                ++p;
            } else if (p == end) {
                m_lastNl = true;
            }
        }
    }

    void parseHead(const QByteArray &head)
    {
        const QList<QByteArray> lines = head.split('\n');
        status = lines.value(0).split(' ').value(1).toInt();
        qint64 length = -1;
        bool chunked = false;
        m_closeAfter = false;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QByteArray &line = lines[i];
            const qsizetype colon = line.indexOf(':');
            if (colon < 0)
                continue;
            const QByteArray name = line.left(colon).trimmed().toLower();
            const QByteArray value = line.mid(colon + 1).trimmed().toLower();
            if (name == "content-length")
                length = value.toLongLong();
            else if (name == "transfer-encoding")
                chunked = value.contains("chunked");
            else if (name == "connection")
                m_closeAfter = value.contains("close");
        }
        if (status >= 100 && status < 200) {
            m_state = State::Head; // interim response: the real head follows
        } else if (chunked) {
            m_state = State::ChunkSize;
        } else if (length >= 0) {
            m_remaining = length;
            m_state = length == 0 ? State::Done : State::Length;
        } else {
            m_state = State::UntilClose;
            m_closeAfter = true;
        }
    }

    // Everything received goes through m_in (responses here are small; request bodies are
    // what gets large), parsed from pos; the consumed prefix is dropped at the end.
    void feed(const char *p, size_t n, qint64 t)
    {
        m_in.append(p, qsizetype(n));
        qsizetype pos = 0;
        while (m_state != State::Done) {
            if (m_state == State::Head) {
                const qsizetype end = m_in.indexOf("\r\n\r\n", pos);
                if (end < 0)
                    break;
                parseHead(m_in.mid(pos, end - pos));
                pos = end + 4;
                continue;
            }
            if (m_state == State::ChunkSize || m_state == State::Trailer) {
                const qsizetype eol = m_in.indexOf("\r\n", pos);
                if (eol < 0)
                    break;
                const QByteArray line = m_in.mid(pos, eol - pos);
                pos = eol + 2;
                if (m_state == State::Trailer) {
                    if (line.isEmpty())
                        m_state = State::Done;
                    continue;
                }
                bool ok = false;
                m_remaining = line.split(';').value(0).trimmed().toLongLong(&ok, 16);
                if (!ok) {
                    failed = true;
                    m_closeAfter = true;
                    m_state = State::Done;
                    break;
                }
                m_state = m_remaining == 0 ? State::Trailer : State::ChunkData;
                continue;
            }
            const qsizetype avail = m_in.size() - pos;
            if (avail <= 0)
                break;
            const char *d = m_in.constData() + pos;
            if (m_state == State::ChunkCrlf) {
                const qsizetype take = std::min<qsizetype>(avail, 2 - m_crlfSeen);
                pos += take;
                m_crlfSeen += int(take);
                if (m_crlfSeen == 2) {
                    m_crlfSeen = 0;
                    m_state = State::ChunkSize;
                }
                continue;
            }
            const qsizetype take =
                m_state == State::UntilClose ? avail : std::min<qsizetype>(avail, m_remaining);
            scanEvents(d, size_t(take), t);
            bodyBytes += take;
            pos += take;
            if (m_state != State::UntilClose) {
                m_remaining -= take;
                if (m_remaining == 0)
                    m_state = m_state == State::Length ? State::Done : State::ChunkCrlf;
            }
        }
        if (m_state == State::Done)
            m_in.clear();
        else
            m_in.remove(0, pos);
    }

    Endpoint m_ep;
    bool m_recordEvents;
    int m_fd = -1;
    bool m_connected = false;
    bool m_active = false;
    bool m_closeAfter = false;
    bool m_lastNl = false;
    State m_state = State::Head;
    qint64 m_remaining = 0;
    int m_crlfSeen = 0;
    QByteArray m_in;
    QList<QByteArray> m_out;
    qint64 m_outOffset = 0;
    std::unique_ptr<QSocketNotifier> m_readN;
    std::unique_ptr<QSocketNotifier> m_writeN;
};

// ---------------------------------------------------------------------------------------
// --sink: the large-body upstream. Reads each request's head and Content-Length body,
// discards the bytes as they come, then answers 200 {} (the mock would parse and record them,
// which costs more than the proxy hop being measured).

class Sink
{
public:
    bool listen(const Endpoint &ep)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        const int one = 1;
        ::setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (m_fd < 0 ||
            ::bind(m_fd, reinterpret_cast<const sockaddr *>(&ep.addr), sizeof ep.addr) != 0 ||
            ::listen(m_fd, 4096) != 0)
            return false;
        m_acceptN = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Read);
        QObject::connect(m_acceptN.get(), &QSocketNotifier::activated, m_acceptN.get(),
                         [this] { onAccept(); });
        return true;
    }

private:
    struct Peer
    {
        int fd = -1;
        std::unique_ptr<QSocketNotifier> n;
        QByteArray head;
        qint64 remaining = -1; // -1: reading a head
    };

    void onAccept()
    {
        for (;;) {
            const int fd = ::accept4(m_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0)
                return;
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            auto peer = std::make_shared<Peer>();
            peer->fd = fd;
            peer->n = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Read);
            QObject::connect(peer->n.get(), &QSocketNotifier::activated, peer->n.get(),
                             [this, peer] { onRead(peer); });
            m_peers.push_back(peer);
        }
    }

    void drop(const std::shared_ptr<Peer> &peer)
    {
        peer->n->setEnabled(false);
        peer->n.release()->deleteLater();
        ::close(peer->fd);
        m_peers.erase(std::remove(m_peers.begin(), m_peers.end(), peer), m_peers.end());
    }

    static void reply(int fd, const QByteArray &bytes)
    {
        // Tiny answers into an empty socket buffer: one send is enough.
        [[maybe_unused]] const ssize_t n =
            ::send(fd, bytes.constData(), size_t(bytes.size()), MSG_NOSIGNAL);
    }

    void onRead(const std::shared_ptr<Peer> &peer)
    {
        static char buf[256 * 1024];
        for (;;) {
            const ssize_t n = ::recv(peer->fd, buf, sizeof buf, 0);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return;
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                drop(peer);
                return;
            }
            const char *p = buf;
            const char *end = buf + n;
            while (p < end) {
                if (peer->remaining < 0) {
                    peer->head.append(p, end - p);
                    p = end;
                    const qsizetype e = peer->head.indexOf("\r\n\r\n");
                    if (e < 0)
                        break;
                    const QByteArray rest = peer->head.mid(e + 4);
                    const QByteArray h = peer->head.left(e).toLower();
                    peer->head.clear();
                    const qsizetype cl = h.indexOf("\ncontent-length:");
                    if (cl < 0) {
                        reply(peer->fd, "HTTP/1.1 411 Length Required\r\nContent-Length: "
                                        "0\r\nConnection: close\r\n\r\n");
                        drop(peer);
                        return;
                    }
                    const qsizetype eol = h.indexOf('\r', cl + 1);
                    peer->remaining = h.mid(cl + 16, eol - cl - 16).trimmed().toLongLong();
                    if (h.contains("\nexpect: 100-continue"))
                        reply(peer->fd, "HTTP/1.1 100 Continue\r\n\r\n");
                    if (!rest.isEmpty()) {
                        // Re-feed what followed the head through the same loop.
                        m_scratch = rest;
                        p = m_scratch.constData();
                        end = p + m_scratch.size();
                    }
                }
                const qint64 take = std::min<qint64>(peer->remaining, end - p);
                p += take;
                peer->remaining -= take;
                if (peer->remaining == 0) {
                    peer->remaining = -1;
                    reply(peer->fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                    "Content-Length: 2\r\n\r\n{}");
                }
            }
        }
    }

    int m_fd = -1;
    std::unique_ptr<QSocketNotifier> m_acceptN;
    std::vector<std::shared_ptr<Peer>> m_peers;
    QByteArray m_scratch;
};

QByteArray requestHead(const Endpoint &ep, qint64 bodySize, const QByteArray &extra = {})
{
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: " + ep.hostPort +
           "\r\nContent-Type: application/json\r\nContent-Length: " + QByteArray::number(bodySize) +
           "\r\n" + extra + "\r\n";
}

// ---------------------------------------------------------------------------------------
// Statistics.

double percentile(std::vector<qint64> v, double p)
{
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    const size_t rank = size_t(std::ceil(p / 100.0 * double(v.size())));
    return double(v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)]);
}

struct LoadStats
{
    qint64 ok = 0;
    qint64 bad = 0;
    std::vector<qint64> latNs;
    double secs = 0;
    double cpu = 0;     // proxy CPU seconds during the measured window
    double selfCpu = 0; // the generator's own
    qint64 peakRssKb = 0;

    void add(const LoadStats &o)
    {
        ok += o.ok;
        bad += o.bad;
        latNs.insert(latNs.end(), o.latNs.begin(), o.latNs.end());
        secs += o.secs;
        cpu += o.cpu;
        selfCpu += o.selfCpu;
        peakRssKb = std::max(peakRssKb, o.peakRssKb);
    }
    double rps() const { return secs > 0 ? double(ok) / secs : 0; }
    double p50us() const { return percentile(latNs, 50) / 1e3; }
    double p99us() const { return percentile(latNs, 99) / 1e3; }
    double cpuUsPerReq() const { return ok > 0 ? cpu * 1e6 / double(ok) : std::nan(""); }
};

struct LoadSpec
{
    Endpoint ep;
    QByteArray head;
    QByteArray body;
    int conc = 1;
    int warmupMs = 0;
    int durationMs = 2000;
    qint64 maxRequests = -1; // count-bound instead of time-bound when > 0
};

// Closed loop: conc connections, each sends its next request as soon as the last answered.
LoadStats runLoad(const LoadSpec &spec, const ProcSet &proc)
{
    LoadStats st;
    QEventLoop loop;
    std::vector<std::unique_ptr<Conn>> conns;
    bool measuring = spec.warmupMs <= 0;
    bool stopping = false;
    int inflight = 0;
    qint64 measureStart = 0;
    double cpu0 = 0;
    double self0 = 0;

    auto startMeasure = [&] {
        measuring = true;
        measureStart = nowNs();
        cpu0 = proc.isEmpty() ? 0 : proc.cpuSeconds();
        self0 = selfCpuSeconds();
        proc.resetPeak();
    };
    auto stop = [&] {
        if (stopping)
            return;
        stopping = true;
        st.secs = double(nowNs() - measureStart) / 1e9;
        st.cpu = proc.isEmpty() ? 0 : proc.cpuSeconds() - cpu0;
        st.selfCpu = selfCpuSeconds() - self0;
        st.peakRssKb = proc.isEmpty() ? 0 : proc.statusKb("VmHWM:");
        if (inflight == 0)
            loop.quit();
    };

    if (measuring)
        startMeasure();
    else
        QTimer::singleShot(spec.warmupMs, &loop, startMeasure);
    if (spec.maxRequests <= 0)
        QTimer::singleShot(std::max(0, spec.warmupMs) + spec.durationMs, &loop, stop);
    // Safety net: a wedged proxy must not hang the benchmark.
    QTimer::singleShot(std::max(0, spec.warmupMs) + spec.durationMs + 120000, &loop, [&] {
        std::fprintf(stderr, "slp_bench: load timed out with %d requests in flight\n", inflight);
        stop();
        loop.quit();
    });

    for (int i = 0; i < spec.conc; ++i) {
        auto c = std::make_unique<Conn>(spec.ep, false);
        c->onDone = [&](Conn &conn) {
            --inflight;
            if (measuring && !stopping) {
                if (conn.failed || conn.status != 200) {
                    if (st.bad < 3 && qEnvironmentVariableIsSet("SLP_BENCH_DEBUG"))
                        std::fprintf(stderr, "failure: status %d failed %d\n", conn.status,
                                     int(conn.failed));
                    ++st.bad;
                } else {
                    ++st.ok;
                    st.latNs.push_back(conn.endNs - conn.startNs);
                }
                if (spec.maxRequests > 0 && st.ok + st.bad >= spec.maxRequests)
                    stop();
            }
            if (stopping) {
                if (inflight == 0)
                    loop.quit();
                return;
            }
            ++inflight;
            if (conn.failed) // not at once: a refused connect would recurse
                QTimer::singleShot(1, &loop,
                                   [&conn, &spec] { conn.request(spec.head, spec.body); });
            else
                conn.request(spec.head, spec.body);
        };
        conns.push_back(std::move(c));
    }
    for (auto &c : conns) {
        ++inflight;
        c->request(spec.head, spec.body);
    }
    loop.exec();
    return st;
}

struct StreamStats
{
    int streams = 0;
    int completed = 0; // every expected event and the stream's end arrived
    int stalled = 0;   // completed, but some gap exceeded interval + 100 ms
    int failed = 0;
    qint64 events = 0;
    std::vector<qint64> ttfeNs;
    std::vector<qint64> gapNs;
    qint64 maxGapNs = 0;
    double secs = 0;
    double cpu = 0;
    double selfCpu = 0;
    double upstreamCpu = 0; // the mock's, to tell its limits from the proxy's
    qint64 peakRssKb = 0;

    int clean() const { return completed - stalled; }
    double cpuUsPerEvent() const { return events > 0 ? cpu * 1e6 / double(events) : std::nan(""); }
};

StreamStats runStreams(const Endpoint &ep, int n, int expectedEvents, int intervalMs, int rampMs,
                       const ProcSet &proc, const ProcSet &upstream)
{
    const QByteArray body =
        R"({"model":"mock","stream":true,"messages":[{"role":"user","content":"Hello"}]})";
    const QByteArray head = requestHead(ep, body.size(),
                                        "X-Mock-Events: " + QByteArray::number(expectedEvents - 3) +
                                            "\r\nX-Mock-Reasoning-Events: 0"
                                            "\r\nX-Mock-Event-Interval-Ms: " +
                                            QByteArray::number(intervalMs) + "\r\n");
    const qint64 stallNs = qint64(intervalMs + 100) * 1000000;

    StreamStats st;
    st.streams = n;
    QEventLoop loop;
    std::vector<std::unique_ptr<Conn>> conns;
    int opened = 0;
    int done = 0;
    const qint64 t0 = nowNs();
    proc.resetPeak();
    const double cpu0 = proc.isEmpty() ? 0 : proc.cpuSeconds();
    const double self0 = selfCpuSeconds();
    const double up0 = upstream.isEmpty() ? 0 : upstream.cpuSeconds();
    qint64 rssMax = 0;

    auto finishAll = [&] {
        st.secs = double(nowNs() - t0) / 1e9;
        st.cpu = proc.isEmpty() ? 0 : proc.cpuSeconds() - cpu0;
        st.selfCpu = selfCpuSeconds() - self0;
        st.upstreamCpu = upstream.isEmpty() ? 0 : upstream.cpuSeconds() - up0;
        st.peakRssKb = std::max(rssMax, proc.isEmpty() ? 0 : proc.statusKb("VmHWM:"));
        loop.quit();
    };

    for (int i = 0; i < n; ++i) {
        auto c = std::make_unique<Conn>(ep, true);
        c->onDone = [&](Conn &conn) {
            ++done;
            const auto &ev = conn.eventNs;
            st.events += qint64(ev.size());
            const bool complete =
                !conn.failed && conn.status == 200 && int(ev.size()) >= expectedEvents;
            if (!ev.empty())
                st.ttfeNs.push_back(ev.front() - conn.startNs);
            bool stall = false;
            for (size_t k = 1; k < ev.size(); ++k) {
                const qint64 gap = ev[k] - ev[k - 1];
                st.gapNs.push_back(gap);
                st.maxGapNs = std::max(st.maxGapNs, gap);
                stall = stall || gap > stallNs;
            }
            if (complete) {
                ++st.completed;
                st.stalled += stall ? 1 : 0;
            } else {
                ++st.failed;
            }
            conn.closeSocket();
            if (done == n)
                finishAll();
        };
        conns.push_back(std::move(c));
    }

    // Open the streams spread over rampMs so accept queues are not flooded at once.
    QTimer ramp;
    ramp.setTimerType(Qt::PreciseTimer);
    const int perTick = std::max(1, int(std::ceil(double(n) / std::max(1, rampMs))));
    QObject::connect(&ramp, &QTimer::timeout, &loop, [&] {
        for (int k = 0; k < perTick && opened < n; ++k) {
            Conn &c = *conns[size_t(opened++)];
            c.request(head, body);
        }
        if (opened == n)
            ramp.stop();
    });
    ramp.start(1);

    QTimer sampler;
    QObject::connect(&sampler, &QTimer::timeout, &loop,
                     [&] { rssMax = std::max(rssMax, proc.statusKb("VmRSS:")); });
    if (!proc.isEmpty())
        sampler.start(250);

    const int deadline = rampMs + expectedEvents * intervalMs + 30000;
    QTimer::singleShot(deadline, &loop, [&] {
        std::fprintf(stderr, "slp_bench: %d of %d streams unfinished at the deadline\n", n - done,
                     n);
        st.failed += n - done;
        for (auto &c : conns)
            c->onDone = nullptr;
        finishAll();
    });
    loop.exec();
    return st;
}

// ---------------------------------------------------------------------------------------
// The scenarios.

struct Way
{
    QString name;     // direct, nginx, slp-qnam, ...
    Endpoint fast;    // small POST target (static JSON behind it)
    Endpoint mock;    // mock upstream target
    Endpoint sink;    // discarding upstream target (large bodies)
    ProcSet proc;     // the proxy's processes (empty for direct)
    bool slp = false; // an slp instance (targets apply)
};

struct Options
{
    bool quick = false;
    int rounds = 3;
    int sliceMs = 2000;
    int warmupMs = 300;
    QList<int> streamCounts{100, 1000, 2000};
    int streamSeconds = 20;
    int intervalMs = 100;
    QString jsonPath;
    QString note;
    ProcSet mock; // the mock upstream's process, for its CPU share during streams
    QStringList only{"small", "large", "stream", "aggregate"};
};

QString fmt(double v, int prec = 0)
{
    if (std::isnan(v))
        return QStringLiteral("-");
    return QString::number(v, 'f', prec);
}

QString fmtAdded(double v, int prec = 0)
{
    if (std::isnan(v))
        return QStringLiteral("-");
    return (v >= 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', prec);
}

// Rotates the order of the ways each round so none always runs first (or right after another).
QList<int> order(int nWays, int round)
{
    QList<int> o;
    for (int i = 0; i < nWays; ++i)
        o << (i + round) % nWays;
    return o;
}

void progress(const QString &s)
{
    std::fprintf(stderr, "  %s\n", qPrintable(s));
    std::fflush(stderr);
}

QByteArray smallBody()
{
    // About 300 bytes, like a short chat turn.
    return R"({"model":"static","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France? Please answer in one short sentence, without any additional commentary or formatting."}],"max_tokens":64,"temperature":0.2,"stream":false})";
}

QByteArray largeBody(qint64 size)
{
    // A chat request carrying one big base64-like string (an image or a long history).
    const QByteArray pre = R"({"model":"sink","messages":[{"role":"user","content":")";
    const QByteArray post = R"("}],"max_tokens":16})";
    QByteArray b;
    b.reserve(size);
    b += pre;
    const QByteArray alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const qint64 fill = size - pre.size() - post.size();
    for (qint64 i = 0; i < fill; ++i)
        b += alphabet[i % alphabet.size()];
    b += post;
    return b;
}

struct Check
{
    QString way;
    QString name;
    QString target;
    QString value;
    bool met = false;
};

int run(const QList<Way> &ways, const Options &opt)
{
    const int nWays = int(ways.size());
    QJsonObject json;
    json["date"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    json["quick"] = opt.quick;
    json["cores"] = int(::sysconf(_SC_NPROCESSORS_ONLN));
    json["note"] = opt.note;
    QJsonArray wayNames;
    for (const Way &w : ways)
        wayNames.append(w.name);
    json["ways"] = wayNames;
    QList<Check> checks;

    // Table lines: label, one cell per way.
    struct Line
    {
        QString label;
        QStringList cells;
        QString target;
    };
    QList<Line> lines;
    auto section = [&](const QString &s) { lines.append({s, {}, {}}); };

    if (opt.only.contains(QStringLiteral("small"))) {
        // -- 1. small POST -------------------------------------------------------------------
        const QByteArray small = smallBody();
        QJsonObject jSmall;
        const QList<int> concs{1, 16, 64};
        QMap<int, QList<LoadStats>> smallRes; // conc -> per way
        for (int c : concs) {
            QList<LoadStats> per(nWays);
            for (int r = 0; r < opt.rounds; ++r) {
                for (int wi : order(nWays, r)) {
                    const Way &w = ways[wi];
                    progress(QStringLiteral("small POST c=%1 round %2 %3")
                                 .arg(c)
                                 .arg(r + 1)
                                 .arg(w.name));
                    LoadSpec spec;
                    spec.ep = w.fast;
                    spec.head = requestHead(w.fast, small.size());
                    spec.body = small;
                    spec.conc = c;
                    spec.warmupMs = opt.warmupMs;
                    spec.durationMs = opt.sliceMs;
                    per[wi].add(runLoad(spec, w.proc));
                }
            }
            smallRes[c] = per;
        }
        {
            section(QStringLiteral("1. small POST (%1 B body, static JSON upstream)")
                        .arg(small.size()));
            const QList<LoadStats> &c1 = smallRes[1];
            const double d50 = c1[0].p50us(), d99 = c1[0].p99us();
            Line l50{QStringLiteral("c=1 latency p50 (us)"), {}, {}};
            Line l99{QStringLiteral("c=1 latency p99 (us)"), {}, {}};
            Line a50{QStringLiteral("c=1 added p50 vs direct (us)"), {}, QStringLiteral("<= +100")};
            Line a99{
                QStringLiteral("c=1 added p99 vs direct (us)"), {}, QStringLiteral("<= nginx")};
            for (int i = 0; i < nWays; ++i) {
                l50.cells << fmt(c1[i].p50us());
                l99.cells << fmt(c1[i].p99us());
                a50.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(c1[i].p50us() - d50));
                a99.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(c1[i].p99us() - d99));
            }
            lines << l50 << l99 << a50 << a99;
            for (int c : concs) {
                Line rps{QStringLiteral("c=%1 req/s").arg(c), {}, c == 16 ? ">= nginx/2" : ""};
                Line cpu{QStringLiteral("c=%1 proxy CPU per request (us)").arg(c), {}, {}};
                Line gen{QStringLiteral("c=%1 generator CPU per request (us)").arg(c), {}, {}};
                Line err{QStringLiteral("c=%1 failed requests").arg(c), {}, {}};
                for (int i = 0; i < nWays; ++i) {
                    const LoadStats &s = smallRes[c][i];
                    rps.cells << fmt(s.rps());
                    cpu.cells << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                         : fmt(s.cpuUsPerReq(), 1));
                    gen.cells << fmt(s.ok > 0 ? s.selfCpu * 1e6 / double(s.ok) : std::nan(""), 1);
                    err.cells << QString::number(s.bad);
                }
                if (c == 1)
                    lines << cpu << gen << err;
                else
                    lines << rps << cpu << gen << err;
            }
            const LoadStats &n1 = c1[1];
            const LoadStats &n16 = smallRes[16][1];
            for (int i = 0; i < nWays; ++i) {
                const Way &w = ways[i];
                QJsonObject jw;
                for (int c : concs) {
                    const LoadStats &s = smallRes[c][i];
                    jw[QStringLiteral("c%1").arg(c)] = QJsonObject{
                        {"requests", s.ok},
                        {"failed", s.bad},
                        {"req_per_s", s.rps()},
                        {"p50_us", s.p50us()},
                        {"p99_us", s.p99us()},
                        {"proxy_cpu_us_per_req", w.proc.isEmpty() ? QJsonValue() : s.cpuUsPerReq()},
                        {"generator_cpu_us_per_req",
                         s.ok > 0 ? s.selfCpu * 1e6 / double(s.ok) : QJsonValue()},
                    };
                }
                jSmall[w.name] = jw;
                if (!w.slp)
                    continue;
                const double added = c1[i].p50us() - d50;
                checks.append({w.name, "added p50 at c=1", "<= +100 us", fmtAdded(added) + " us",
                               added <= 100});
                checks.append({w.name, "p99 at c=1 vs nginx", "<= " + fmt(n1.p99us()) + " us",
                               fmt(c1[i].p99us()) + " us", c1[i].p99us() <= n1.p99us()});
                const double rps = smallRes[16][i].rps();
                checks.append({w.name, "req/s at c=16", ">= " + fmt(n16.rps() / 2) + " (nginx/2)",
                               fmt(rps), rps >= n16.rps() / 2});
            }
            json["small_post"] = jSmall;
        }
    }

    if (opt.only.contains(QStringLiteral("large"))) {
        // -- 2. large bodies -----------------------------------------------------------------
        struct Size
        {
            const char *label;
            qint64 bytes;
            int count;
            double targetMs;
        };
        const QList<Size> sizes{{"1.2 MB", 1200000, opt.quick ? 3 : 10, 1.0},
                                {"5.8 MB", 5800000, opt.quick ? 2 : 6, std::nan("")},
                                {"22 MB", 22000000, opt.quick ? 1 : 3, 20.0}};
        QJsonObject jLarge;
        section(QStringLiteral(
            "2. large bodies (c=1, upstream reads and discards the body, answers 200 {})"));
        for (const Size &sz : sizes) {
            const QByteArray body = largeBody(sz.bytes);
            QList<LoadStats> per(nWays);
            for (int r = 0; r < opt.rounds; ++r) {
                for (int wi : order(nWays, r)) {
                    const Way &w = ways[wi];
                    progress(QStringLiteral("large %1 round %2 %3")
                                 .arg(sz.label)
                                 .arg(r + 1)
                                 .arg(w.name));
                    LoadSpec spec;
                    spec.ep = w.sink;
                    spec.head = requestHead(w.sink, body.size());
                    spec.body = body;
                    spec.conc = 1;
                    spec.durationMs = 600000;
                    spec.maxRequests = 1;
                    runLoad(spec, ProcSet()); // warm the connection
                    spec.maxRequests = sz.count;
                    per[wi].add(runLoad(spec, w.proc));
                }
            }
            const double d50 = per[0].p50us() / 1e3;
            Line l{QStringLiteral("%1 latency p50 (ms)").arg(sz.label), {}, {}};
            Line a{QStringLiteral("%1 added p50 (ms)").arg(sz.label),
                   {},
                   std::isnan(sz.targetMs) ? QString() : "<= +" + fmt(sz.targetMs)};
            Line m{QStringLiteral("%1 proxy peak RSS (MB)").arg(sz.label), {}, {}};
            Line e{QStringLiteral("%1 failed requests").arg(sz.label), {}, {}};
            QJsonObject js;
            for (int i = 0; i < nWays; ++i) {
                const LoadStats &s = per[i];
                const double p50 = s.p50us() / 1e3;
                l.cells << fmt(p50, 2);
                a.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(p50 - d50, 2));
                m.cells << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                   : fmt(double(s.peakRssKb) / 1024, 1));
                e.cells << QString::number(s.bad);
                js[ways[i].name] = QJsonObject{
                    {"requests", s.ok},
                    {"failed", s.bad},
                    {"p50_ms", p50},
                    {"p99_ms", s.p99us() / 1e3},
                    {"added_p50_ms", i == 0 ? QJsonValue() : p50 - d50},
                    {"proxy_peak_rss_kb", ways[i].proc.isEmpty() ? QJsonValue() : s.peakRssKb},
                    {"proxy_cpu_ms_per_req",
                     ways[i].proc.isEmpty() ? QJsonValue() : s.cpuUsPerReq() / 1e3},
                };
                if (ways[i].slp && !std::isnan(sz.targetMs)) {
                    checks.append({ways[i].name, QStringLiteral("%1 body added p50").arg(sz.label),
                                   "<= +" + fmt(sz.targetMs) + " ms",
                                   fmtAdded(p50 - d50, 2) + " ms",
                                   s.bad == 0 && p50 - d50 <= sz.targetMs});
                }
            }
            lines << l << a << m << e;
            jLarge[sz.label] = js;
        }
        json["large_bodies"] = jLarge;
    }

    if (opt.only.contains(QStringLiteral("stream"))) {
        // -- 3. streaming --------------------------------------------------------------------
        const int expected = opt.streamSeconds * 1000 / opt.intervalMs;
        section(QStringLiteral("3. streaming (%1 events/s each for %2 s, mock upstream)")
                    .arg(1000 / opt.intervalMs)
                    .arg(opt.streamSeconds));
        QJsonObject jStream;
        for (int n : opt.streamCounts) {
            QList<StreamStats> per(nWays);
            const int rampMs = std::clamp(n, 100, 1000);
            // Fixed order, baselines first: a proxy that wedges its streams leaves the mock loaded
            // with them for the rest of the run, so direct and nginx must not come after it.
            for (int wi = 0; wi < nWays; ++wi) {
                const Way &w = ways[wi];
                progress(QStringLiteral("streams N=%1 %2").arg(n).arg(w.name));
                per[wi] = runStreams(w.mock, n, expected, opt.intervalMs, rampMs, w.proc, opt.mock);
            }
            const double dT50 = percentile(per[0].ttfeNs, 50) / 1e6;
            const double dT99 = percentile(per[0].ttfeNs, 99) / 1e6;
            const double dG99 = percentile(per[0].gapNs, 99) / 1e6;
            Line ok{QStringLiteral("N=%1 streams without stall").arg(n),
                    {},
                    n == 2000 ? QStringLiteral("all") : QString()};
            Line t50{QStringLiteral("N=%1 added TTFE p50 (ms)").arg(n), {}, {}};
            Line t99{QStringLiteral("N=%1 added TTFE p99 (ms)").arg(n), {}, {}};
            Line g99{QStringLiteral("N=%1 inter-event gap p99 (ms)").arg(n), {}, {}};
            Line ga{QStringLiteral("N=%1 added gap p99 (ms)").arg(n), {}, {}};
            Line gm{QStringLiteral("N=%1 max gap (ms)").arg(n), {}, {}};
            Line cpu{QStringLiteral("N=%1 proxy CPU per event (us)").arg(n),
                     {},
                     QStringLiteral("<= 15")};
            Line rss{QStringLiteral("N=%1 proxy peak RSS (MB)").arg(n),
                     {},
                     n == 2000 ? QStringLiteral("<= 100") : QString()};
            Line gen{QStringLiteral("N=%1 generator CPU (% of a core)").arg(n), {}, {}};
            Line up{QStringLiteral("N=%1 mock upstream CPU (% of a core)").arg(n), {}, {}};
            QJsonObject jn;
            for (int i = 0; i < nWays; ++i) {
                const StreamStats &s = per[i];
                const double tt50 = percentile(s.ttfeNs, 50) / 1e6;
                const double tt99 = percentile(s.ttfeNs, 99) / 1e6;
                const double gp99 = percentile(s.gapNs, 99) / 1e6;
                ok.cells << QStringLiteral("%1/%2").arg(s.clean()).arg(n);
                t50.cells << (i == 0 ? fmt(tt50, 2) + " abs" : fmtAdded(tt50 - dT50, 2));
                t99.cells << (i == 0 ? fmt(tt99, 2) + " abs" : fmtAdded(tt99 - dT99, 2));
                g99.cells << fmt(gp99, 1);
                ga.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(gp99 - dG99, 1));
                gm.cells << fmt(double(s.maxGapNs) / 1e6, 0);
                cpu.cells << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                     : fmt(s.cpuUsPerEvent(), 1));
                rss.cells << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                     : fmt(double(s.peakRssKb) / 1024, 1));
                gen.cells << fmt(s.secs > 0 ? 100 * s.selfCpu / s.secs : 0, 0);
                up.cells << (opt.mock.isEmpty()
                                 ? QStringLiteral("-")
                                 : fmt(s.secs > 0 ? 100 * s.upstreamCpu / s.secs : 0, 0));
                jn[ways[i].name] = QJsonObject{
                    {"streams", n},
                    {"completed", s.completed},
                    {"stalled", s.stalled},
                    {"failed", s.failed},
                    {"without_stall", s.clean()},
                    {"events", s.events},
                    {"ttfe_p50_ms", tt50},
                    {"ttfe_p99_ms", tt99},
                    {"added_ttfe_p50_ms", i == 0 ? QJsonValue() : tt50 - dT50},
                    {"added_ttfe_p99_ms", i == 0 ? QJsonValue() : tt99 - dT99},
                    {"gap_p99_ms", gp99},
                    {"added_gap_p99_ms", i == 0 ? QJsonValue() : gp99 - dG99},
                    {"max_gap_ms", double(s.maxGapNs) / 1e6},
                    {"proxy_cpu_us_per_event",
                     ways[i].proc.isEmpty() ? QJsonValue() : s.cpuUsPerEvent()},
                    {"proxy_peak_rss_kb", ways[i].proc.isEmpty() ? QJsonValue() : s.peakRssKb},
                    {"generator_cpu_share", s.secs > 0 ? s.selfCpu / s.secs : 0},
                    {"upstream_cpu_share", s.secs > 0 ? s.upstreamCpu / s.secs : 0},
                    {"seconds", s.secs},
                };
            }
            lines << ok << t50 << t99 << g99 << ga << gm << cpu << rss << gen << up;
            jStream[QStringLiteral("N%1").arg(n)] = jn;
            if (n == opt.streamCounts.last()) {
                for (int i = 0; i < nWays; ++i) {
                    if (!ways[i].slp)
                        continue;
                    const StreamStats &s = per[i];
                    checks.append({ways[i].name, QStringLiteral("%1 streams without stall").arg(n),
                                   QStringLiteral("%1/%1").arg(n),
                                   QStringLiteral("%1/%2").arg(s.clean()).arg(n), s.clean() == n});
                    checks.append({ways[i].name, QStringLiteral("RSS at %1 streams").arg(n),
                                   "<= 100 MB", fmt(double(s.peakRssKb) / 1024, 1) + " MB",
                                   s.peakRssKb <= 100 * 1024});
                    checks.append({ways[i].name,
                                   QStringLiteral("CPU per event at %1 streams").arg(n), "<= 15 us",
                                   fmt(s.cpuUsPerEvent(), 1) + " us", s.cpuUsPerEvent() <= 15});
                }
            }
        }
        json["streaming"] = jStream;
    }

    if (opt.only.contains(QStringLiteral("aggregate"))) {
        // -- 4. aggregate --------------------------------------------------------------------
        // Non-streaming chat requests answered with 50 content pieces: pass-through (route mock)
        // against reassembly (route mock-agg: slp asks upstream for a stream and joins it).
        section(QStringLiteral(
            "4. aggregate (non-streaming, 50 pieces, c=1): pass-through vs reassembled"));
        QJsonObject jAgg;
        {
            const QByteArray pass =
                R"({"model":"mock","messages":[{"role":"user","content":"Hello"}],"stream":false})";
            const QByteArray agg =
                R"({"model":"mock-agg","messages":[{"role":"user","content":"Hello"}],"stream":false})";
            const QByteArray knobs = "X-Mock-Events: 50\r\nX-Mock-Reasoning-Events: 0\r\n";
            // Ways here: every way with the pass-through body, each slp also with the aggregate
            // one.
            struct AggWay
            {
                QString name;
                int way;
                bool aggregate;
            };
            QList<AggWay> aw;
            for (int i = 0; i < nWays; ++i) {
                aw.append({ways[i].name, i, false});
                if (ways[i].slp)
                    aw.append({ways[i].name + "+aggregate", i, true});
            }
            QList<LoadStats> per(aw.size());
            for (int r = 0; r < opt.rounds; ++r) {
                for (int k : order(int(aw.size()), r)) {
                    const Way &w = ways[aw[k].way];
                    progress(QStringLiteral("aggregate round %1 %2").arg(r + 1).arg(aw[k].name));
                    const QByteArray &body = aw[k].aggregate ? agg : pass;
                    LoadSpec spec;
                    spec.ep = w.mock;
                    spec.head = requestHead(w.mock, body.size(), knobs);
                    spec.body = body;
                    spec.conc = 1;
                    spec.warmupMs = opt.warmupMs;
                    spec.durationMs = opt.sliceMs;
                    per[k].add(runLoad(spec, w.proc));
                }
            }
            const double d50 = per[0].p50us();
            for (qsizetype k = 0; k < aw.size(); ++k) {
                const LoadStats &s = per[k];
                const bool isProxy = !ways[aw[k].way].proc.isEmpty();
                jAgg[aw[k].name] = QJsonObject{
                    {"requests", s.ok},
                    {"failed", s.bad},
                    {"p50_us", s.p50us()},
                    {"p99_us", s.p99us()},
                    {"added_p50_us", k == 0 ? QJsonValue() : s.p50us() - d50},
                    {"proxy_cpu_us_per_req", isProxy ? s.cpuUsPerReq() : QJsonValue()},
                };
            }
            // One line per slp: pass vs aggregate.
            Line hdr{QStringLiteral("(columns here: direct | nginx | per slp: pass / aggregate)"),
                     {},
                     {}};
            Line l50{QStringLiteral("p50 (us)"), {}, {}};
            Line a50{QStringLiteral("added p50 vs direct (us)"), {}, {}};
            Line cpu{QStringLiteral("proxy CPU per request (us)"), {}, {}};
            for (int i = 0; i < nWays; ++i) {
                QStringList c50, cad, ccpu;
                for (qsizetype k = 0; k < aw.size(); ++k) {
                    if (aw[k].way != i)
                        continue;
                    c50 << fmt(per[k].p50us());
                    cad << (k == 0 ? QStringLiteral("-") : fmtAdded(per[k].p50us() - d50));
                    ccpu << (ways[i].proc.isEmpty() ? QStringLiteral("-")
                                                    : fmt(per[k].cpuUsPerReq(), 1));
                }
                l50.cells << c50.join(" / ");
                a50.cells << cad.join(" / ");
                cpu.cells << ccpu.join(" / ");
            }
            lines << hdr << l50 << a50 << cpu;
        }
        json["aggregate"] = jAgg;
    }

    // -- the table -----------------------------------------------------------------------
    const int labelW = 40;
    const int cellW = 16;
    QString out;
    out += QStringLiteral("%1").arg("", -labelW);
    for (const Way &w : ways)
        out += QStringLiteral("%1").arg(w.name, cellW);
    out += QStringLiteral("  %1\n").arg("target");
    for (const Line &l : lines) {
        if (l.cells.isEmpty()) {
            out += "\n" + l.label + "\n";
            continue;
        }
        out += QStringLiteral("  %1").arg(l.label, -(labelW - 2));
        for (const QString &c : l.cells)
            out += QStringLiteral("%1").arg(c, cellW);
        if (!l.target.isEmpty())
            out += "  " + l.target;
        out += "\n";
    }
    out += QStringLiteral("\nTargets (issue #8)\n");
    QJsonArray jChecks;
    for (const Check &c : checks) {
        out += QStringLiteral("  %1 %2 %3 %4  %5\n")
                   .arg(c.way, -12)
                   .arg(c.name, -32)
                   .arg(c.value, 14)
                   .arg("(target " + c.target + ")", -26)
                   .arg(c.met ? "MET" : "MISSED");
        jChecks.append(QJsonObject{{"way", c.way},
                                   {"check", c.name},
                                   {"target", c.target},
                                   {"value", c.value},
                                   {"met", c.met}});
    }
    json["targets"] = jChecks;
    std::fputs(qPrintable(out), stdout);
    std::fflush(stdout);

    if (!opt.jsonPath.isEmpty()) {
        QFile f(opt.jsonPath);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            std::fprintf(stderr, "slp_bench: cannot write %s\n", qPrintable(opt.jsonPath));
            return 1;
        }
        json["table"] = out;
        f.write(QJsonDocument(json).toJson(QJsonDocument::Indented));
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("slp_bench");
    raiseFileLimit();
    std::signal(SIGPIPE, SIG_IGN);

    QCommandLineParser p;
    p.setApplicationDescription(
        "SLP's three-way benchmark load generator (see bench/README.md; bench/run.sh drives it).");
    p.addHelpOption();
    p.addOptions({
        {"direct-fast", "Static-JSON upstream, direct.", "host:port"},
        {"direct-mock", "Mock upstream, direct.", "host:port"},
        {"nginx-fast", "nginx proxying to the static upstream.", "host:port"},
        {"nginx-mock", "nginx proxying to the mock upstream.", "host:port"},
        {"direct-sink", "Discarding upstream (large bodies), direct.", "host:port"},
        {"nginx-sink", "nginx proxying to the discarding upstream.", "host:port"},
        {"sink", "Run only the discarding upstream on HOST:PORT (until killed).", "host:port"},
        {"only", "Comma-separated scenarios: small,large,stream,aggregate (default all).", "list"},
        {"nginx-pid", "nginx master pid (workers found as its children).", "pid"},
        {"mock-pid", "The mock upstream's pid (its CPU is reported for streams).", "pid"},
        {"slp", "An slp instance: NAME=host:port:pid (repeatable).", "spec"},
        {"quick", "Smoke run: one round, short slices, fewer and shorter streams."},
        {"streams", "Comma-separated stream counts (default 100,1000,2000).", "list"},
        {"stream-seconds", "Seconds per stream at 10 events/s (default 20).", "s"},
        {"rounds", "Interleaved rounds per scenario (default 3).", "n"},
        {"slice-ms", "Measured time per load slice (default 2000).", "ms"},
        {"json", "Write the results here.", "file"},
        {"note", "Free text stored in the JSON.", "text"},
    });
    p.process(app);

    Options opt;
    if (p.isSet("quick")) {
        opt.quick = true;
        opt.rounds = 1;
        opt.sliceMs = 300;
        opt.warmupMs = 100;
        opt.streamCounts = {100, 500};
        opt.streamSeconds = 2;
    }
    if (p.isSet("streams")) {
        opt.streamCounts.clear();
        for (const QString &s : p.value("streams").split(',', Qt::SkipEmptyParts))
            opt.streamCounts << s.toInt();
    }
    if (p.isSet("stream-seconds"))
        opt.streamSeconds = std::max(1, p.value("stream-seconds").toInt());
    if (p.isSet("rounds"))
        opt.rounds = std::max(1, p.value("rounds").toInt());
    if (p.isSet("slice-ms"))
        opt.sliceMs = std::max(100, p.value("slice-ms").toInt());
    opt.jsonPath = p.value("json");
    opt.note = p.value("note");
    opt.mock = ProcSet(p.value("mock-pid").toInt());
    if (p.isSet("only"))
        opt.only = p.value("only").split(',', Qt::SkipEmptyParts);

    if (p.isSet("sink")) {
        const auto ep = parseEndpoint(p.value("sink"));
        Sink sink;
        if (!ep || !sink.listen(*ep)) {
            std::fprintf(stderr, "slp_bench: cannot listen on %s\n", qPrintable(p.value("sink")));
            return 1;
        }
        return app.exec();
    }

    auto need = [&](const char *name) -> Endpoint {
        const auto ep = parseEndpoint(p.value(name));
        if (!ep) {
            std::fprintf(stderr, "slp_bench: --%s HOST:PORT (IPv4) is required\n", name);
            std::exit(2);
        }
        return *ep;
    };
    QList<Way> ways;
    ways.append({"direct", need("direct-fast"), need("direct-mock"), need("direct-sink"), ProcSet(),
                 false});
    ways.append({"nginx", need("nginx-fast"), need("nginx-mock"), need("nginx-sink"),
                 ProcSet(p.value("nginx-pid").toInt()), false});
    for (const QString &spec : p.values("slp")) {
        const qsizetype eq = spec.indexOf('=');
        const qsizetype lastColon = spec.lastIndexOf(':');
        const auto ep = parseEndpoint(spec.mid(eq + 1, lastColon - eq - 1));
        const int pid = spec.mid(lastColon + 1).toInt();
        if (eq <= 0 || !ep || pid <= 0) {
            std::fprintf(stderr, "slp_bench: --slp NAME=HOST:PORT:PID, got %s\n", qPrintable(spec));
            return 2;
        }
        ways.append({spec.left(eq), *ep, *ep, *ep, ProcSet(pid), true});
    }
    if (ways.size() < 3) {
        std::fprintf(stderr, "slp_bench: at least one --slp is required\n");
        return 2;
    }
    return run(ways, opt);
}
