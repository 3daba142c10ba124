#!/usr/bin/env bash
# Compiles every distinct row of the shipped GEMM tables (lib/kernels/configs) for the
# targets that use it (sm_90 rows: sm_90, gfx942, gfx950, and sm_90a where it falls back to
# them; sm_90a rows: sm_90a) and checks each code object; prints one line per row and target (ok,
# skip with why, known with the gap, or FAIL with what is missing) and a summary. Exit status
# 1 on any FAIL.
#   shipped-gemm-configs.sh WAVETILE CONFIG_DIR WORK_DIR
set -uo pipefail
wavetile=$1 configs=$2 work=$3
report() { echo "$1 $2"; }
# needs TEXT PATTERN...: the patterns that TEXT lacks.
needs() {
  local text=$1 missing=() p
  shift
  for p in "$@"; do grep -qE -- "$p" <<<"$text" || missing+=("$p"); done
  echo "${missing[*]}"
}
for table in "$configs"/gemm_a16w16.csv "$configs"/gemm_a8w8.csv "$configs"/gemm_a8w8_blockscale.csv \
  "$configs"/gemm_a4w4.csv; do
  op=$(basename "$table" .csv)
  # Columns: target,cu_num,M,N,K,dtype,out_dtype,bias,block_m,block_n,block_k,stages,warps,split_k,skinny,us
  # sm_90a rows are built for sm_90a; sm_90 rows for sm_90 and CDNA, and for sm_90a too where
  # no sm_90a row of the same shape shadows them (sm_90a falls back to sm_90's rows).
  tail -n +2 "$table" | grep -v '^#' |
    awk -F, '$1 == "sm_90a" { own[$3 FS $4 FS $5 FS $6 FS $7 FS $8] = 1; rows[NR] = $0; next } { rows[NR] = $0 }
             END { for (i in rows) { split(rows[i], f, FS); key = f[3] FS f[4] FS f[5] FS f[6] FS f[7] FS f[8]
                     targets = f[1] == "sm_90a" ? "sm_90a" : "sm_90 gfx942 gfx950" ((key in own) ? "" : " sm_90a")
                     line = targets; for (c = 4; c <= 15; ++c) line = line FS f[c]; print line } }' | sort -u |
    while IFS=, read -r targets n k dtype out bias bm bn bk stages warps split skinny; do
      config="bm=$bm:bn=$bn:bk=$bk:stages=$stages:warps=$warps:splitk=$split$([[ $skinny == 1 ]] && echo :skinny)"
      for target in $targets; do
        input=$dtype
        [[ $op == gemm_a8w8* && $target == gfx942 ]] && input=f8E4M3FNUZ # gfx942's MFMA format
        if [[ $op == gemm_a8w8 ]]; then
          spec="gemm_a8w8:$out:$k:n=$n:in=$input:token:channel:$config"
        elif [[ $op == gemm_a8w8_blockscale ]]; then
          spec="gemm_a8w8_blockscale:$out:$k:n=$n:in=$input:$config"
        elif [[ $op == gemm_a4w4 ]]; then
          spec="gemm_a4w4:$out:$k:n=$n:$config"
        else
          spec="gemm_a16w16:$dtype:$k:n=$n:out=$out:$config"
        fi
        spec+=$([[ $bias == 1 ]] && echo :bias):a16
        name="$spec on $target"
        object=$work/object.$([[ $target == sm_* ]] && echo ptx || echo hsaco)
        if ! error=$("$wavetile" compile --op "$spec" --target "$target" -o "$object" 2>&1); then
          # The tables are the H200's: a row that does not fit there is a failure.
          if grep -q "may use at most" <<<"$error" && [[ $target != sm_* ]]; then
            report skip "$name (its shared memory exceeds the target's)"
          else
            report FAIL "$name: $error"
          fi
          continue
        fi
        info=$("$wavetile" inspect "$object")
        # Its K loop (where a split has more than one K step): the matrix instructions in it.
        steps=$(((((k + bk - 1) / bk) + split - 1) / split))
        loop=$(grep '^  in loops' <<<"$info")
        if [[ $skinny == 1 ]]; then # vector-unit products: no matrix instructions, no LDS operands
          missing=$(needs "$info" 'spill_store_bytes=0 spill_load_bytes=0|vgpr_spill_count=0 sgpr_spill_count=0' \
            'ld\.global\.v4|buffer_load_dwordx4')
          # int8's byte products four at a time by dp4a on NVIDIA (in the PTX itself)
          [[ $dtype == i8 && $target == sm_* ]] && ! grep -q 'dp4a\.s32\.s32' "$object" && missing+=" dp4a.s32.s32"
        elif [[ $target == sm_* ]]; then
          ring=$([[ $stages -gt 1 ]] && echo 'cp\.async\.cg\.shared\.global=' || echo '')
          # sm_90a: wgmma where tile-use-warpgroup-dots applies (a ring, warpgroups of 64-row
          # blocks, N a multiple of 64, 32/64/128-byte K rows, bf16, fp8 or int8 read from shared
          # memory: not MXFP4, decoded in registers), else mma.sync.
          bytes=$([[ $op == gemm_a8w8* ]] && echo 1 || echo 2)
          matrix='mma\.sync\.aligned'
          if [[ $target == sm_90a && $stages -gt 1 && $((warps % 4)) == 0 && $((bm % (16 * warps))) == 0 &&
                $((bn % 64)) == 0 && $op != gemm_a4w4 ]] && [[ $((bk * bytes)) =~ ^(32|64|128)$ ]]; then
            matrix='wgmma\.mma_async'
          fi
          missing=$(needs "$info" 'spill_store_bytes=0 spill_load_bytes=0' "$matrix" $ring)
          ((steps > 1)) && [[ -n $(needs "$loop" "$matrix") ]] && missing+=" $matrix in the K loop"
          [[ $stages -le 1 ]] && grep -q 'cp\.async' <<<"$info" && missing+=" (cp.async without a ring)"
        else
          # 128-bit buffer loads (into registers, or straight into LDS for deeper rings on
          # gfx950) where the hardware has them: CDNA3 moves a ring's operands into LDS a dword
          # per lane (its load-to-LDS limit), and a tile whose smaller operand gives the lanes
          # under 16 bytes each per K step cannot fill 128-bit loads. LDS operand reads of 128
          # bits: gfx950's bf16/fp8 MFMA fragments are that wide; gfx942's 64-bit ones are
          # read two K steps at a time.
          bytes=$([[ $op == gemm_a8w8* ]] && echo 1 || echo 2)
          waves=$((warps < (bm / 16) * (bn / 16) ? warps : (bm / 16) * (bn / 16))) # as fitGemmConfig
          smaller=$((bm < bn ? bm : bn))
          if [[ $target == gfx942 && $stages -gt 1 ]]; then
            global='buffer_load_dword_lds='
          elif ((smaller * bk * bytes < 16 * 64 * waves)); then
            global='buffer_load_dword'
          else
            global='buffer_load_dwordx4(_lds)?='
          fi
          lds_read='ds_read_b128='
          missing=$(needs "$info" 'private_segment_fixed_size=0 vgpr_spill_count=0' \
            'occupancy [0-9]+ waves/SIMD' 'v_mfma' "$global" "$lds_read")
          ((steps > 1)) && [[ -n $(needs "$loop" 'v_mfma') ]] && missing+=" v_mfma in the K loop"
          # SGPRs spilled into VGPR lanes (no scratch, no memory traffic): a known gap of
          # CDNA3's rings, whose dword load-to-LDS instructions each take an LDS address in
          # an SGPR; anywhere else a failure.
          if [[ -z $missing ]] && ! grep -q 'sgpr_spill_count=0' <<<"$info"; then
            if [[ $target == gfx942 && $stages -gt 1 ]]; then
              report known "$name: $(grep -o 'sgpr_spill_count=[0-9]*' <<<"$info") into VGPR lanes"
              continue
            fi
            missing='sgpr_spill_count=0'
          fi
        fi
        missing=${missing# }
        if [[ -z $missing ]]; then report ok "$name"; else report FAIL "$name lacks: $missing"; fi
      done
    done
done | tee "$work/lines.txt"
ok=$(grep -c '^ok ' "$work/lines.txt") skipped=$(grep -c '^skip ' "$work/lines.txt")
known=$(grep -c '^known ' "$work/lines.txt") failed=$(grep -c '^FAIL ' "$work/lines.txt")
echo "shipped GEMM configurations: $ok ok, $skipped skipped, $known known gaps, $failed failed"
((failed == 0))
