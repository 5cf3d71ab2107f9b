// SPDX-License-Identifier: GPL-3.0-or-later
// parseRequestHead + ChunkedBodyValidator: never crash, never read outside the input, and
// give the same answer whichever way the bytes are split (a request arrives in any number of
// reads). Checked properties:
//  - Complete: headLength within the input, the head ends in CRLF CRLF, no CR/LF/NUL in any
//    header name or value, names are tokens, the method is a token, the target has no
//    controls or spaces, Content-Length and chunked are not both set, the body limit holds.
//  - Every prefix of a complete head short of its end is Incomplete (never Rejected or
//    Complete), so the guard never refuses a request only because it arrived in pieces.
//  - The chunked validator gives the same result, consumed count and payload size fed in one
//    piece or byte by byte / in fuzz-chosen pieces.
#include "http/chunkedbody.h"
#include "http/requesthead.h"

#include <cstdio>
#include <cstdlib>

using namespace slp;

namespace {

[[noreturn]] void fail(const char *what, QByteArrayView input)
{
    std::fprintf(stderr, "fuzz_request_head: %s\n  input (%lld bytes): %s\n", what,
                 static_cast<long long>(input.size()),
                 input.toByteArray().left(400).toPercentEncoding().constData());
    std::abort();
}

bool sameHead(const RequestHead &a, const RequestHead &b)
{
    return a.state == b.state && a.errorStatus == b.errorStatus && a.headLength == b.headLength &&
           a.method == b.method && a.target == b.target && a.versionMinor == b.versionMinor &&
           a.headers == b.headers && a.contentLength == b.contentLength && a.chunked == b.chunked &&
           a.expectContinue == b.expectContinue && a.keepAlive == b.keepAlive;
}

struct ChunkRun
{
    ChunkedBodyValidator::Result result = ChunkedBodyValidator::Result::NeedMore;
    qsizetype consumed = 0;
    qint64 dataBytes = 0;
};

// Feeds `body` in pieces of the given sizes (cycled), stopping at Done or Error.
ChunkRun feedSplit(QByteArrayView body, QByteArrayView sizes)
{
    ChunkedBodyValidator v;
    ChunkRun run;
    qsizetype pos = 0;
    qsizetype k = 0;
    while (pos < body.size()) {
        qsizetype step =
            sizes.isEmpty() ? body.size() : (uchar(sizes[k++ % sizes.size()]) % 17) + 1;
        step = std::min(step, body.size() - pos);
        qsizetype used = 0;
        run.result = v.feed(body.sliced(pos, step), &used);
        if (used < 0 || used > step)
            fail("chunked validator consumed more than it was given", body);
        run.consumed += used;
        pos += step;
        if (run.result != ChunkedBodyValidator::Result::NeedMore)
            break;
        if (used != step)
            fail("chunked validator stopped consuming while needing more", body);
    }
    run.dataBytes = v.dataBytes();
    return run;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 32 * 1024)
        return 0;
    // First byte: limits; second: how the chunked body is split. The rest is the request.
    RequestHeadLimits limits;
    limits.maxHeaderBytes = 64 + (data[0] & 0x0f) * 512;
    limits.maxBodyBytes = (data[0] & 0x10) ? 100 : (64ll << 20);
    const QByteArrayView splitSizes(reinterpret_cast<const char *>(data + 1), 1);
    const QByteArrayView input(reinterpret_cast<const char *>(data + 2), qsizetype(size - 2));

    const RequestHead head = parseRequestHead(input, limits);
    if (head.state == RequestHead::State::Rejected) {
        const int s = head.errorStatus;
        if (!(s == 400 || s == 413 || s == 414 || s == 417 || s == 431 || s == 501 || s == 505))
            fail("unexpected rejection status", input);
        if (head.errorMessage.isEmpty())
            fail("rejection without a reason", input);
        return 0;
    }
    if (head.state == RequestHead::State::Incomplete) {
        // Waiting for more is only allowed while the head (after the stray CRLFs a client may
        // send between requests, which the header timeout bounds) is within the limit.
        qsizetype start = 0;
        while (start + 1 < input.size() && input[start] == '\r' && input[start + 1] == '\n')
            start += 2;
        if (input.size() - start > limits.maxHeaderBytes)
            fail("incomplete head far over the header limit was not refused", input);
        return 0;
    }

    // Complete.
    if (head.headLength <= 0 || head.headLength > input.size())
        fail("headLength outside the input", input);
    if (!input.first(head.headLength).endsWith("\r\n\r\n"))
        fail("head does not end with CRLF CRLF", input);
    if (head.method.isEmpty())
        fail("empty method", input);
    for (const char c : head.method)
        if (!isTokenChar(c))
            fail("method is not a token", input);
    for (const char c : head.target)
        if (uchar(c) <= 0x20 || uchar(c) == 0x7f)
            fail("control or space in target", input);
    for (const auto &[name, value] : head.headers) {
        if (name.isEmpty())
            fail("empty header name", input);
        for (const char c : name)
            if (!isTokenChar(c))
                fail("header name is not a token", input);
        if (value.contains('\r') || value.contains('\n') || value.contains('\0'))
            fail("CR/LF/NUL in a header value", input);
    }
    if (head.chunked && head.contentLength >= 0)
        fail("Content-Length and chunked both accepted", input);
    if (head.contentLength > limits.maxBodyBytes)
        fail("Content-Length over the limit accepted", input);
    if (head.versionMinor != 0 && head.versionMinor != 1)
        fail("odd HTTP version", input);

    // Re-parsing exactly the head gives the same head; every shorter prefix is Incomplete.
    if (!sameHead(parseRequestHead(input.first(head.headLength), limits), head))
        fail("re-parsing the head alone differs", input);
    const qsizetype step = std::max<qsizetype>(1, head.headLength / 24);
    for (qsizetype n = 0; n < head.headLength; n += step) {
        const RequestHead partial = parseRequestHead(input.first(n), limits);
        if (partial.state != RequestHead::State::Incomplete)
            fail(partial.state == RequestHead::State::Complete
                     ? "a prefix of the head is already Complete"
                     : "a prefix of a good head is Rejected",
                 input);
    }

    if (head.chunked) {
        const QByteArrayView body = input.sliced(head.headLength);
        const ChunkRun whole = feedSplit(body, {});
        const ChunkRun pieces = feedSplit(body, splitSizes);
        const ChunkRun bytes = feedSplit(body, QByteArrayView("\0", 1));
        if (whole.result != pieces.result || whole.result != bytes.result)
            fail("chunked result depends on the split", input);
        if (whole.result != ChunkedBodyValidator::Result::Error &&
            (whole.consumed != pieces.consumed || whole.consumed != bytes.consumed ||
             whole.dataBytes != pieces.dataBytes || whole.dataBytes != bytes.dataBytes))
            fail("chunked consumed/dataBytes depend on the split", input);
        if (whole.dataBytes > body.size())
            fail("chunked payload larger than the body", input);
        if (whole.result == ChunkedBodyValidator::Result::Done && whole.consumed > body.size())
            fail("chunked consumed past the body", input);
    }
    return 0;
}
