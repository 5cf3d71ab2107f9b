// SPDX-License-Identifier: GPL-3.0-or-later
#include "aggregate/sseeventreader.h"

#include <utility>

namespace slp {

SseEventReader::SseEventReader(qint64 maxEventBytes) : m_maxEventBytes(maxEventBytes)
{}

bool SseEventReader::feed(QByteArrayView bytes, const Sink &sink)
{
    m_sink = &sink;
    qsizetype pos = 0;
    const qsizetype n = bytes.size();
    while (pos < n && !m_stopped) {
        if (m_skipLf) {
            m_skipLf = false;
            if (bytes[pos] == '\n') {
                ++pos;
                continue;
            }
        }
        qsizetype end = pos;
        while (end < n && bytes[end] != '\n' && bytes[end] != '\r')
            ++end;
        if (end == n) {
            m_line.append(bytes.sliced(pos));
            checkPending();
            break;
        }
        m_skipLf = bytes[end] == '\r';
        if (m_line.isEmpty()) {
            processLine(bytes.sliced(pos, end - pos));
        } else {
            // the line started in an earlier feed(): only now is it whole (and its UTF-8 too)
            m_line.append(bytes.sliced(pos, end - pos));
            const QByteArray line = std::exchange(m_line, {});
            processLine(line);
        }
        pos = end + 1;
    }
    m_sink = nullptr;
    return !m_stopped;
}

bool SseEventReader::finish(const Sink &sink, QByteArray *pending)
{
    pending->clear();
    m_sink = &sink;
    if (!m_stopped && !m_line.isEmpty()) {
        const QByteArray line = std::exchange(m_line, {});
        processLine(line);
    }
    m_sink = nullptr;
    if (!m_stopped && m_hasData) {
        *pending = std::exchange(m_data, {});
        m_hasData = false;
    }
    return !m_stopped;
}

bool SseEventReader::checkPending()
{
    if (m_line.size() + m_data.size() > m_maxEventBytes) {
        m_overLimit = true;
        m_stopped = true;
        return false;
    }
    return true;
}

bool SseEventReader::processLine(QByteArrayView line)
{
    if (m_atStart) {
        m_atStart = false;
        if (line.startsWith("\xEF\xBB\xBF"))
            line = line.sliced(3);
    }
    if (line.isEmpty()) {
        if (!m_hasData)
            return true;
        const Event event{false, std::exchange(m_data, {})};
        m_hasData = false;
        m_stopped = !(*m_sink)(event);
        return !m_stopped;
    }
    if (line.front() == ':')
        return true; // comment / keep-alive
    const qsizetype colon = line.indexOf(':');
    const QByteArrayView field = colon < 0 ? line : line.first(colon);
    QByteArrayView value = colon < 0 ? QByteArrayView() : line.sliced(colon + 1);
    if (value.startsWith(' '))
        value = value.sliced(1);
    if (field == "error") {
        m_stopped = !(*m_sink)(Event{true, value.toByteArray()});
        return !m_stopped;
    }
    if (field != "data")
        return true; // event:, id:, retry: and unknown fields do not affect the body
    if (m_hasData)
        m_data.append('\n');
    m_data.append(value);
    m_hasData = true;
    return checkPending();
}

void SseEventReader::release()
{
    m_stopped = true;
    m_line = {};
    m_data = {};
}

} // namespace slp
