// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/bytechain.h"

#include <algorithm>

namespace slp {

QByteArray sharedSlice(const QByteArray &bytes, qsizetype from, qsizetype to)
{
    from = std::clamp<qsizetype>(from, 0, bytes.size());
    to = std::clamp<qsizetype>(to, from, bytes.size());
    if (from == 0 && to == bytes.size())
        return bytes;
    QByteArray slice = bytes; // one more reference, no copy
    QByteArray::DataPointer &d = slice.data_ptr();
    if (d.d_ptr() == nullptr) // raw data, whose lifetime is someone else's: copy it
        return bytes.mid(from, to - from);
    d.ptr += from; // the same block, seen from `from`
    d.size = to - from;
    return slice;
}

ByteChain::ByteChain(QByteArray whole)
{
    append(std::move(whole));
}

ByteChain ByteChain::edited(const QByteArray &bytes, QList<ByteEdit> edits)
{
    std::sort(edits.begin(), edits.end(),
              [](const ByteEdit &a, const ByteEdit &b) { return a.at < b.at; });
    qsizetype from = 0;
    for (const ByteEdit &e : edits) {
        if (e.at < from || e.removed < 0 || e.at + e.removed > bytes.size())
            return ByteChain(bytes);
        from = e.at + e.removed;
    }
    ByteChain out;
    from = 0;
    for (const ByteEdit &e : edits) {
        out.append(sharedSlice(bytes, from, e.at));
        out.append(e.inserted);
        from = e.at + e.removed;
    }
    out.append(sharedSlice(bytes, from, bytes.size()));
    return out;
}

void ByteChain::append(QByteArray piece)
{
    if (piece.isEmpty())
        return;
    m_size += piece.size();
    m_pieces.append(std::move(piece));
}

void ByteChain::append(const ByteChain &more)
{
    for (const QByteArray &piece : more.m_pieces)
        append(piece);
}

ByteChain ByteChain::from(qsizetype offset) const
{
    if (offset <= 0)
        return *this;
    ByteChain out;
    for (const QByteArray &piece : m_pieces) {
        if (offset >= piece.size()) {
            offset -= piece.size();
            continue;
        }
        out.append(sharedSlice(piece, offset, piece.size()));
        offset = 0;
    }
    return out;
}

QByteArray ByteChain::joined() const
{
    QByteArray out;
    out.reserve(m_size);
    for (const QByteArray &piece : m_pieces)
        out.append(piece);
    return out;
}

} // namespace slp
