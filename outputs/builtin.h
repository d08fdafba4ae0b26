/*
 * builtin.h - the channel types compiled into libispout, for the registry
 * in channel.c (which registers them in isp_channels_init).
 */
#ifndef ISP_OUTPUTS_BUILTIN_H
#define ISP_OUTPUTS_BUILTIN_H

#include "channel.h"

extern const struct isp_channel_ops isp_stdout_ops;    /* stdout.c */
extern const struct isp_channel_ops isp_file_ops;      /* file.c */
extern const struct isp_channel_ops isp_kafka_ops;     /* kafka.c (HAVE_RDKAFKA) */
extern const struct isp_channel_ops isp_socket_ops;    /* socket.c */
extern const struct isp_channel_ops isp_redis_ops;     /* redis.c (HAVE_HIREDIS) */
extern const struct isp_channel_ops isp_influxdb_ops;  /* influxdb.c */
extern const struct isp_channel_ops isp_prometheus_ops;        /* prometheus.c */

#endif
