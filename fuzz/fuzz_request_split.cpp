// SPDX-License-Identifier: GPL-3.0-or-later
// RequestFramer, the way a connection drives it: the same request stream fed whole and split
// into reads at fuzz-chosen points must give the same verdict, status, body size and decoded
// body bytes. (A head
// that completed in a later read once left part of that read unvalidated: `0x0` was taken as
// a chunk size in some runs and not others.)
//
// Input: byte 0 = number of cuts (mod 8), then two bytes per cut (a position), then the stream.
#include "http/requestframer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace slp;

namespace {

struct Outcome
{
    RequestFramer::Verdict verdict = RequestFramer::Verdict::NeedMore;
    int status = 0;
    qint64 bodyBytes = -1;
    QByteArray body;
    bool operator==(const Outcome &o) const
    {
        return verdict == o.verdict && status == o.status && bodyBytes == o.bodyBytes &&
               body == o.body;
    }
};

Outcome run(QByteArrayView stream, const std::vector<qsizetype> &cuts)
{
    RequestHeadLimits limits;
    limits.maxHeaderBytes = 1024;
    limits.maxBodyBytes = 4096;
    RequestFramer framer(limits);
    Outcome out;
    qsizetype from = 0;
    std::vector<qsizetype> ends = cuts;
    ends.push_back(stream.size());
    for (const qsizetype end : ends) {
        if (end <= from)
            continue;
        QByteArrayView read = stream.sliced(from, end - from);
        from = end;
        QByteArrayView body;
        if (framer.inHead()) {
            qsizetype headBytes = 0;
            // The connection peeks at most headRoom() bytes for the head, then the whole read.
            out.verdict =
                framer.feedHead(read.first(std::min(read.size(), framer.headRoom())), &headBytes);
            if (out.verdict == RequestFramer::Verdict::Rejected) {
                out.status = framer.errorStatus();
                return out;
            }
            if (out.verdict == RequestFramer::Verdict::NeedMore)
                continue;
            body = read.sliced(headBytes);
        } else {
            body = read;
        }
        if (framer.wantsBodyBytes() && !body.isEmpty()) {
            const auto verdict = framer.feedBody(body);
            if (verdict == RequestFramer::Verdict::Rejected) {
                out.verdict = verdict;
                out.status = framer.errorStatus();
                return out;
            }
            if (verdict == RequestFramer::Verdict::BodyComplete) {
                out.verdict = verdict;
                out.bodyBytes = framer.head().bodyBytes;
                out.body = framer.takeBody();
                if (out.body.size() != out.bodyBytes) {
                    std::fprintf(stderr, "fuzz_request_split: decoded %lld bytes of %lld\n",
                                 static_cast<long long>(out.body.size()),
                                 static_cast<long long>(out.bodyBytes));
                    std::abort();
                }
                return out; // what follows is the next request
            }
        }
    }
    if (!framer.inHead())
        out.bodyBytes = framer.head().bodyBytes;
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int cutCount = data[0] % 8;
    const size_t header = 1 + size_t(cutCount) * 2;
    if (size < header)
        return 0;
    const QByteArrayView stream(reinterpret_cast<const char *>(data + header),
                                qsizetype(size - header));
    std::vector<qsizetype> cuts;
    for (int i = 0; i < cutCount; ++i) {
        const qsizetype at = (qsizetype(data[1 + 2 * i]) << 8 | data[2 + 2 * i]) %
                             std::max<qsizetype>(1, stream.size());
        cuts.push_back(at);
    }
    std::sort(cuts.begin(), cuts.end());
    const Outcome whole = run(stream, {});
    const Outcome split = run(stream, cuts);
    if (!(whole == split)) {
        std::fprintf(
            stderr, "fuzz_request_split: verdict %d/%d status %d/%d body %lld/%lld differ\n",
            int(whole.verdict), int(split.verdict), whole.status, split.status,
            static_cast<long long>(whole.bodyBytes), static_cast<long long>(split.bodyBytes));
        std::abort();
    }
    return 0;
}
