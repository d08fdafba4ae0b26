/*
 * pcap_floor.c - the floor the benchmarks compare against: libpcap's read
 * loop over a capture file, touching every captured byte, nothing else.
 * Prints packets/second on stdout (one number) and a summary on stderr.
 */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t n = 0, sum = 0;
	struct timespec t0, t1;

	if (argc != 2) {
		fprintf(stderr, "usage: pcap_floor FILE\n");
		return 2;
	}
	pcap_t *pc = pcap_open_offline(argv[1], err);
	if (!pc) {
		fprintf(stderr, "pcap_floor: %s\n", err);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (pcap_next_ex(pc, &h, &d) == 1) {
		/* touch every byte, 8 at a time where aligned enough */
		uint32_t i = 0;
		for (; i + 8 <= h->caplen; i += 8) {
			uint64_t w;
			__builtin_memcpy(&w, d + i, 8);
			sum += w;
		}
		for (; i < h->caplen; i++)
			sum += d[i];
		n++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	pcap_close(pc);
	printf("%.0f\n", s > 0 ? (double)n / s : 0);
	fprintf(stderr, "pcap_floor: %llu packets in %.3f s (checksum %llx)\n",
		(unsigned long long)n, s, (unsigned long long)sum);
	return 0;
}
