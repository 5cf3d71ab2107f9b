// SPDX-License-Identifier: GPL-3.0-or-later
#include "httpfield.h"

#include <algorithm>
#include <cstring>

namespace slp {

bool isTokenChar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool isToken(QByteArrayView text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), isTokenChar);
}

bool isHopByHopHeader(QByteArrayView name)
{
    static constexpr QByteArrayView kNames[] = {"connection",
                                                "keep-alive",
                                                "proxy-connection",
                                                "proxy-authenticate",
                                                "proxy-authorization",
                                                "te",
                                                "trailer",
                                                "transfer-encoding",
                                                "upgrade"};
    return std::any_of(std::begin(kNames), std::end(kNames), [name](QByteArrayView hop) {
        return name.compare(hop, Qt::CaseInsensitive) == 0;
    });
}

} // namespace slp
