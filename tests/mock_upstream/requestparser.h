#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

namespace slp::mock {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// One HTTP/1.x request as it arrived: headers in order with repeats kept, body de-chunked.
struct Request
{
    QByteArray method;
    QByteArray target;
    QByteArray version; // "HTTP/1.1" or "HTTP/1.0"
    HeaderList headers;
    QByteArray body;
    bool chunked = false;

    QByteArray header(QByteArrayView name) const;
    QList<QByteArray> headerValues(QByteArrayView name) const;
    bool hasHeader(QByteArrayView name) const;
    bool keepAlive() const;
    QByteArray path() const; // target without the query
    QByteArray query() const;
};

// Incremental parser: feed it the connection's input buffer; it consumes what it used.
class RequestParser
{
public:
    enum class Status
    {
        NeedMore,
        HeadReady, // head parsed, body still to come: the caller may answer 100 Continue
        Done,
        Error,
    };

    Status parse(QByteArray &buffer);
    Request take();
    void reset();
    const Request &current() const { return m_request; }
    int errorStatus() const { return m_errorStatus; }
    const QByteArray &errorMessage() const { return m_error; }
    bool expectsContinue() const;

private:
    enum class State
    {
        Head,
        LengthBody,
        ChunkSize,
        ChunkData,
        ChunkDataEnd,
        Trailers,
        Done
    };

    Status fail(int status, const QByteArray &message);
    Status parseHead(QByteArray &buffer);

    State m_state = State::Head;
    Request m_request;
    qint64 m_remaining = 0;
    int m_errorStatus = 400;
    QByteArray m_error;
};

} // namespace slp::mock
