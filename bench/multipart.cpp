// SPDX-License-Identifier: GPL-3.0-or-later
#include "multipart.h"

#include "load.h"

namespace slp::bench {

namespace {

struct Upload
{
    const char *label;
    qint64 fileBytes;
    int count;      // requests per way per round (a full run)
    int quickCount; // ... in a --quick run
};

const QList<Upload> kUploads{{"1 MB", 1000000, 30, 4}, {"25 MB", 25000000, 5, 1}};
const QByteArray kBoundary = "----formdata-slp-bench-7c1d2e";

// file, then model, then a plain field: the openai npm client's order.
QByteArray multipartBody(qint64 fileBytes)
{
    QByteArray audio(fileBytes, '\0');
    for (qint64 i = 0; i < fileBytes; ++i)
        audio[i] = char((i * 2654435761u) >> 13);
    return "--" + kBoundary +
           "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
           "Content-Type: audio/wav\r\n\r\n" +
           audio + "\r\n--" + kBoundary +
           "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nsink\r\n--" + kBoundary +
           "\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\njson\r\n--" +
           kBoundary + "--\r\n";
}

QByteArray multipartHead(const Endpoint &ep, qint64 bodySize)
{
    return "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: " + ep.hostPort +
           "\r\nContent-Type: multipart/form-data; boundary=" + kBoundary +
           "\r\nContent-Length: " + QByteArray::number(bodySize) + "\r\n\r\n";
}

} // namespace

QJsonObject runMultipart(const QList<Way> &ways, const Options &opt, QList<Line> &lines)
{
    const int nWays = int(ways.size());
    lines.append({QStringLiteral("6. multipart uploads (c=1; a file part, then the model part; "
                                 "the sink discards them)"),
                  {},
                  {}});
    QJsonObject json;
    for (const Upload &up : kUploads) {
        const QByteArray body = multipartBody(up.fileBytes);
        QList<LoadStats> per(nWays);
        for (int r = 0; r < opt.rounds; ++r) {
            for (int wi : order(nWays, r)) {
                const Way &w = ways[wi];
                progress(QStringLiteral("multipart %1 round %2 %3")
                             .arg(QString::fromLatin1(up.label))
                             .arg(r + 1)
                             .arg(w.name));
                LoadSpec spec;
                spec.ep = w.sink;
                spec.head = multipartHead(w.sink, body.size());
                spec.body = body;
                spec.durationMs = 600000;
                spec.maxRequests = 1;
                runLoad(spec, ProcSet()); // warm the connection
                spec.maxRequests = opt.quick ? up.quickCount : up.count;
                per[wi].add(runLoad(spec, w.proc));
            }
        }
        const QString label = QString::fromLatin1(up.label);
        const double d50 = per[0].p50us() / 1e3;
        const double nginxAdded = per[1].p50us() / 1e3 - d50;
        Line l{QStringLiteral("multipart %1 latency p50 (ms)").arg(label), {}, {}};
        Line a{QStringLiteral("multipart %1 added p50 (ms)").arg(label), {}, {}};
        Line x{QStringLiteral("multipart %1 added vs nginx's").arg(label), {}, {}};
        Line c{QStringLiteral("multipart %1 proxy CPU per request (ms)").arg(label), {}, {}};
        Line f{QStringLiteral("multipart %1 failed requests").arg(label), {}, {}};
        QJsonObject js;
        for (int i = 0; i < nWays; ++i) {
            const LoadStats &s = per[i];
            const bool proxy = !ways[i].proc.isEmpty();
            const double p50 = s.p50us() / 1e3;
            const double added = p50 - d50;
            l.cells << fmt(p50, 2);
            a.cells << (i == 0 ? QStringLiteral("-") : fmtAdded(added, 2));
            x.cells << (!ways[i].slp || nginxAdded <= 0 ? QStringLiteral("-")
                                                        : fmt(added / nginxAdded, 1) + "x");
            c.cells << (proxy ? fmt(s.cpuUsPerReq() / 1e3, 2) : QStringLiteral("-"));
            f.cells << QString::number(s.bad);
            js[ways[i].name] = QJsonObject{
                {"requests", s.ok},
                {"failed", s.bad},
                {"p50_ms", p50},
                {"p99_ms", s.p99us() / 1e3},
                {"added_p50_ms", i == 0 ? QJsonValue() : added},
                {"proxy_cpu_ms_per_req", proxy ? s.cpuUsPerReq() / 1e3 : QJsonValue()},
            };
        }
        lines << l << a << x << c << f;
        json[label] = js;
    }
    return json;
}

} // namespace slp::bench
