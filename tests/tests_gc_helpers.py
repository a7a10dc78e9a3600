"""Independent counts for the GC tests: per-family line counts by plain substring tests (not the reader's regexes),
and the corpus files' line numbers as SOURCES.md lists them."""
from __future__ import annotations

# corpus/gc/SOURCES.md, table "Sources", column "lines".
GC_FILES = {
    "art_logcat_sailfish_android10.txt": 21, "art_logcat_Fortochca_logs.txt": 21, "art_logcat_Crany-web_log.txt": 20,
    "art_logcat_blackshibe_android_device_sony_pdx201_a12.txt": 8, "art_logcat_Bob0111_microg-log.txt": 4,
    "art_logcat_karlokarate_FishIT-Player_logcat_030.txt": 3190, "art_logcat_JayMass5800_HabitV8_error2.txt": 15,
    "art_logcat_httperry_PixelPlayer.txt": 2, "art_logcat_AKS-Labs_SandeshVahak.txt": 2,
    "art_logcat_AvinSSSS_logcat.txt": 1,
}

WORDS = [("GC freed", "collection"), ("Waiting for a blocking GC", "waiting_blocking"),
         ("Starting a blocking GC", "starting_blocking"), ("WaitForGcToComplete", "wait_done"),
         ("Clamp target GC heap", "clamp"), ("collection of SoftReferences", "soft_refs")]


def count_by_words(lines: list[str]) -> dict[str, int]:
    out = {kind: 0 for _, kind in WORDS}
    for ln in lines:
        for word, kind in WORDS:
            if word in ln:
                out[kind] += 1
                break
    return out
