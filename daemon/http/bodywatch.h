// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>

#include <functional>
#include <memory>

namespace slp {

struct RequestHead;

// Sees a request body as it arrives, after every read. The model scan lives above http (in
// routing); a connection that shows it each read's bytes as they land lets the route be known
// the moment the last byte is, instead of after a second pass over the whole body.
class BodyWatch
{
public:
    virtual ~BodyWatch() = default;
    // `soFar` is every body byte read so far, in the request's one buffer (its address may
    // change between calls while a chunked body grows): a watch keeps offsets, not pointers.
    virtual void arrived(QByteArrayView soFar) = 0;
};

// Makes the watch for a request whose head was just read, or nullptr for none.
using BodyWatchFactory = std::function<std::unique_ptr<BodyWatch>(const RequestHead &head)>;

} // namespace slp
