/* Installed set-uid and set-gid root by the adversarial suite (into the skill, and into a
 * scratch directory under the host's /usr), then run inside the sandbox: it prints the ids and
 * capabilities it really got. Deliberately able to do nothing else, since a copy of it may sit
 * set-uid root on the host for the length of a test. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
        uid_t ruid, euid, suid;
        gid_t rgid, egid, sgid;
        char line[256];
        FILE *f;

        if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0)
                return 1;
        printf("ruid %u\neuid %u\nsuid %u\nrgid %u\negid %u\nsgid %u\n", ruid, euid, suid, rgid, egid, sgid);
        f = fopen("/proc/self/status", "re");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "CapEff:", 7) == 0)
                        printf("capeff %s", line + 7 + strspn(line + 7, " \t"));
        if (f)
                fclose(f);
        printf("setuid0 %d\n", setuid(0) < 0 ? errno : 0);
        return 0;
}
