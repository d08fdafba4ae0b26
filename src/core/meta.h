/*
 * meta.h - the "meta" pseudo-protocol: attributes of the packet itself
 * (capture time, lengths, position, protocol path), not of a header.
 */
#ifndef ISP_META_H
#define ISP_META_H

#include "plugin.h"

struct isp_registry;

extern const struct isp_proto_desc isp_meta_desc;

/* Registry whose names meta.proto_hierarchy prints (set at finalize). */
void isp_meta_bind(const struct isp_registry *reg);

#endif
