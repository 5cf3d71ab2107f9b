#pragma once

// Everything integration tests use, in one include.
#include "childprocess.h"
#include "command.h"
#include "httpclient.h"
#include "mockupstream.h"
#include "slpdaemon.h"
