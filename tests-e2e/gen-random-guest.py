#!/usr/bin/env python3
"""Generate a random program for the end-to-end trace tests.

    gen-random-guest.py SEED OUTPUT.S [--call-next] [--link-regs] [--fences]

The program (assembly for gcc's preprocessor, RV32 or RV64) is a set of
functions rp_f0 .. rp_fN with random control flow: conditional branches
of every kind (compressed too) on pseudo-random bits, counted loops,
direct calls, calls through a table, auipc+jalr calls (sequentially
inferable), tail calls, switches through a jump table, chains of jumps,
a recursion deeper than any return stack, straight-line code longer than
a TB or a block's 1024 half-words, loads, stores, atomics and CSR
accesses, and exceptions (ecall, ebreak, c.ebreak, illegal instructions,
load, store and fetch access faults) taken and resumed in the middle of
all of it.  rp_run(seed) calls every function once, in order; the bits
the branches test come from a xorshift state in s1 seeded by its
argument, so every run of a seed takes the same path and other seeds
take others.  Each function's dynamic instruction count is bounded
(calls only go to later functions, and the generator adds up the worst
case), so a run ends.

The program keeps the calling convention of the guest library: calls to
rv_trap_expect() before each exception (the library's handler resumes
after the faulting instruction, or at ra for a fetch fault), s1 saved by
rp_run() for its C caller.  CSR accesses (mtval) happen only when
rp_in_m is set: the guest also runs the program in S and U.

--call-next adds calls of the next instruction (the code after the call
runs as the callee, then again as the caller when the return lands
there, at the depth below), without changing the programs of other
seeds without it.

--link-regs adds the transfers of section 4.1.1 of the E-trace draft
that ra-only code never has: calls through x5 (jal t0, jalr t0 from
another register and from t0 itself) returned from by jr t0, c.jr t0 or
jalr with a destination that is not a link register, a jalr ra, 0(ra)
call, and the co-routine swaps jalr ra, 0(t0), c.jalr t0 and
jalr t0, 0(ra).  Also without changing other seeds' programs.

--fences adds fence.i (QEMU ends the translation block there and starts
the next one afresh) and fence, between any two statements.
"""
import random
import sys

# Registers the random straight-line code works on (a1-a5 compress)
WORK = ['a1', 'a2', 'a3', 'a4', 'a5', 't0', 't1', 't2', 't3', 't4']
NFUNCS = 20
BUDGET = 3000           # worst-case dynamic instructions per function
FRAME_SLOTS = 4         # loop counters: one per loop nesting level
LONG_CODE = 3           # straight-line runs longer than a TB, per program


class Gen:
    def __init__(self, seed, call_next=False, link_regs=False, fences=False):
        self.r = random.Random(seed)
        self.call_next = call_next
        self.link_regs = link_regs
        self.fences = fences
        self.label = 0
        self.cost = {}          # function index -> worst-case cost
        self.data = []          # tables (.rodata lines)
        self.long_left = LONG_CODE

    def new_label(self, what):
        self.label += 1
        return '.L%s%d' % (what, self.label)

    # ------------------------------------------------------------ pieces

    def alu(self, n, regs=WORK):
        r = self.r
        out = []
        for _ in range(n):
            rd, a, b = r.choice(regs), r.choice(regs), r.choice(regs)
            k = r.randrange(9)
            if k == 0:
                op = r.choice(['add', 'sub', 'xor', 'or', 'and', 'sll',
                               'srl', 'sra', 'slt', 'sltu', 'mul'])
                out.append('%s %s, %s, %s' % (op, rd, a, b))
            elif k <= 2:
                op = r.choice(['addi', 'xori', 'ori', 'andi'])
                out.append('%s %s, %s, %d' % (op, rd, a,
                                              r.randrange(-2048, 2048)))
            elif k == 3:
                op = r.choice(['slli', 'srli', 'srai'])
                out.append('%s %s, %s, %d' % (op, rd, a, r.randrange(32)))
            elif k == 4:
                out.append('lui %s, %d' % (rd, r.randrange(1 << 20)))
            elif k == 5:
                out.append('li %s, %d' % (rd, r.randrange(-32, 32)))
            elif k == 6:
                out.append('mv %s, %s' % (rd, a))
            elif k == 7:
                # the compressed forms (the assembler picks them)
                out.append('addi %s, %s, %d' % (rd, rd, r.randrange(-32, 32)))
            else:
                out.append('add %s, %s, %s' % (rd, rd, b))
        return out, n

    def step(self):
        """A xorshift step of s1: new bits for the next decisions."""
        return ['slli t6, s1, 13', 'xor s1, s1, t6', 'srli t6, s1, 7',
                'xor s1, s1, t6', 'slli t6, s1, 17', 'xor s1, s1, t6'], 6

    def branch_on_bits(self, target):
        """A conditional branch to target on bits of s1, of a random kind."""
        r = self.r
        k = r.randrange(5)
        bit = 1 << r.randrange(11)
        if k == 0:
            return ['andi a5, s1, %d' % bit, 'beqz a5, %s' % target], 2
        if k == 1:
            return ['andi a4, s1, %d' % bit, 'bnez a4, %s' % target], 2
        op = r.choice(['beq', 'bne', 'blt', 'bge', 'bltu', 'bgeu'])
        sh1, sh2 = r.randrange(1, 20), r.randrange(1, 20)
        return ['srli t5, s1, %d' % sh1, 'andi t5, t5, 7',
                'srli t6, s1, %d' % sh2, 'andi t6, t6, 7',
                '%s t5, t6, %s' % (op, target)], 5

    # -------------------------------------------------------- statements

    def stmt(self, fn, depth, budget):
        r = self.r
        kinds = ['alu', 'alu', 'step', 'if', 'if', 'mem', 'trap', 'jumps']
        if depth < 2:
            kinds += ['loop', 'switch']
        if fn + 1 < NFUNCS:
            kinds += ['call', 'call', 'icall', 'sicall']
        if depth == 0:
            kinds += ['rec', 'csr', 'long']
            if self.call_next:
                kinds.append('callnext')
        if self.link_regs:
            kinds += ['linkcall', 'swap']
        if self.fences:
            kinds.append('fence')
        kind = r.choice(kinds)
        if kind == 'fence':
            return [r.choice(['fence.i', 'fence', 'fence rw, rw'])], 1
        if kind == 'alu':
            return self.alu(r.randrange(1, 9))
        if kind == 'step':
            return self.step()
        if kind == 'long':
            n = r.randrange(520, 700)
            if self.long_left == 0 or n > budget:
                return self.alu(3)
            self.long_left -= 1
            return self.alu(n)
        if kind == 'if':
            return self.stmt_if(fn, depth, budget)
        if kind == 'loop':
            return self.stmt_loop(fn, depth, budget)
        if kind == 'switch':
            return self.stmt_switch(fn, depth, budget)
        if kind in ('call', 'sicall'):
            callee = self.callee(fn, budget - 3)
            if callee is None:
                return self.alu(2)
            if kind == 'call':
                return ['call rp_f%d' % callee], self.cost[callee] + 1
            lab = self.new_label('pc')
            return ['%s: auipc t1, %%pcrel_hi(rp_f%d)' % (lab, callee),
                    'jalr ra, %%pcrel_lo(%s)(t1)' % lab], \
                self.cost[callee] + 2
        if kind == 'icall':
            return self.stmt_icall(fn, budget)
        if kind == 'callnext':
            return self.stmt_callnext()
        if kind == 'linkcall':
            return self.stmt_linkcall()
        if kind == 'swap':
            return self.stmt_swap()
        if kind == 'rec':
            if budget < 400:
                return self.alu(2)
            return ['andi a0, s1, 31', 'addi a0, a0, 8', 'call rp_rec'], \
                400
        if kind == 'mem':
            return self.stmt_mem()
        if kind == 'csr':
            lab = self.new_label('csr')
            return ['lw t5, rp_in_m', 'beqz t5, %s' % lab,
                    'csrrw a1, mtval, a2', 'csrrs a3, mtval, a4',
                    'csrrci a5, mtval, 5', '%s:' % lab], 7
        if kind == 'trap':
            return self.stmt_trap()
        # a chain of jumps over dead code
        out = []
        for _ in range(r.randrange(1, 4)):
            lab = self.new_label('j')
            out += ['j %s' % lab, 'addi a1, a1, 1', '%s:' % lab]
        return out, len(out) // 3

    def block(self, fn, depth, budget):
        out, cost = [], 0
        for _ in range(self.r.randrange(1, 6)):
            tables = len(self.data)
            lines, c = self.stmt(fn, depth, budget - cost)
            if cost + c > budget:
                del self.data[tables:]      # their labels are not emitted
                break
            out += lines
            cost += c
        return out, cost

    def stmt_if(self, fn, depth, budget):
        lelse, lend = self.new_label('else'), self.new_label('fi')
        test, c0 = self.branch_on_bits(lelse)
        then, c1 = self.block(fn, depth + 1, (budget - c0) // 2)
        out = test + then
        if self.r.randrange(3):
            other, c2 = self.block(fn, depth + 1, (budget - c0) // 2)
            out += ['j %s' % lend, '%s:' % lelse] + other + ['%s:' % lend]
        else:
            c2 = 0
            out += ['%s:' % lelse]
        return out, c0 + max(c1, c2) + 1

    def stmt_loop(self, fn, depth, budget):
        slot = (1 + depth) * 8
        head = self.new_label('loop')
        inner = (budget - 4) // 4 - 12
        if inner < 4:
            return self.alu(2)
        body, c = self.block(fn, depth + 1, inner)
        step, cs = self.step()
        out = ['andi t5, s1, 3', 'addi t5, t5, 1',
               'REG_S t5, %d(sp)' % slot, '%s:' % head] + step + body + \
              ['REG_L t5, %d(sp)' % slot, 'addi t5, t5, -1',
               'REG_S t5, %d(sp)' % slot, 'bnez t5, %s' % head]
        return out, 3 + 4 * (cs + c + 4)

    def stmt_switch(self, fn, depth, budget):
        n = self.r.choice([2, 4])
        table, lend = self.new_label('jt'), self.new_label('esac')
        cases = [self.new_label('case') for _ in range(n)]
        out = ['la t5, %s' % table, 'andi t6, s1, %d' % ((n - 1) << 2),
               'srli t6, t6, 2', 'slli t6, t6, LOG_PTR', 'add t5, t5, t6',
               'REG_L t5, 0(t5)', 'jr t5']
        worst = 0
        for lab in cases:
            body, c = self.block(fn, depth + 1, (budget - 8) // 2)
            out += ['%s:' % lab] + body + ['j %s' % lend]
            worst = max(worst, c)
        out.append('%s:' % lend)
        self.data += ['.balign PTR_BYTES', '%s:' % table] + \
            ['PTR %s' % lab for lab in cases]
        return out, 8 + worst

    def callee(self, fn, budget):
        later = [j for j in range(fn + 1, NFUNCS) if self.cost[j] <= budget]
        return self.r.choice(later) if later else None

    def stmt_icall(self, fn, budget):
        later = [j for j in range(fn + 1, NFUNCS)
                 if self.cost[j] <= budget - 8]
        if not later:
            return self.alu(2)
        n = self.r.choice([2, 4])
        targets = [self.r.choice(later) for _ in range(n)]
        table = self.new_label('ft')
        self.data += ['.balign PTR_BYTES', '%s:' % table] + \
            ['PTR rp_f%d' % t for t in targets]
        return ['la t5, %s' % table, 'andi t6, s1, %d' % ((n - 1) << 4),
                'srli t6, t6, 4', 'slli t6, t6, LOG_PTR', 'add t5, t5, t6',
                'REG_L t5, 0(t5)', 'jalr t5'], \
            8 + max(self.cost[t] for t in targets)

    def stmt_callnext(self):
        """A call of the next instruction: the code after it runs twice,
        as the callee, then (its return landing there, with no branch in
        between) as the caller, at the depth below.  The second return
        goes past it, to an address chosen without a branch."""
        # t4, t5 and t6 choose the second return's address: not the body's
        body, c = self.alu(self.r.randrange(1, 8),
                           [reg for reg in WORK if reg != 't4'])
        again, after = self.new_label('cn'), self.new_label('cnx')
        out = ['la t6, %s' % after, 'REG_S t6, %d(sp)' % ((FRAME_SLOTS + 1) * 8),
               'li t5, 0', 'call %s' % again, '%s:' % again,
               'xori t5, t5, 1'] + body + \
              ['REG_L t6, %d(sp)' % ((FRAME_SLOTS + 1) * 8),
               'sub t6, t6, ra',
               'addi t4, t5, -1',      # 0 the first time, all ones then
               'and t6, t6, t4', 'add ra, ra, t6', 'ret', '%s:' % after]
        return out, 2 * (c + 7) + 4

    def leaf(self):
        """Straight-line code that keeps t0 and ra (the link registers)"""
        return self.alu(self.r.randrange(1, 6),
                        [reg for reg in WORK if reg != 't0'])

    @staticmethod
    def norvc(insn):
        """insn in its 32-bit encoding, which the assembler would compress"""
        return ['.option push', '.option norvc', insn, '.option pop']

    def stmt_linkcall(self):
        """A call of code in this function through a link register (4.1.1:
        x5 in every form, and jalr ra, 0(ra)), and its return"""
        r = self.r
        body, after = self.new_label('lk'), self.new_label('lkx')
        link = r.choice(['t0', 't0', 't0', 'ra'])
        if link == 'ra':
            # rd == rs1 == x1: a call; the function reloads ra at its end
            call = ['la ra, %s' % body, 'jalr ra, 0(ra)']
        else:
            call = r.choice([['jal t0, %s' % body],
                             ['la t1, %s' % body, 'jalr t0, 0(t1)'],
                             ['la t0, %s' % body, 'jalr t0, 0(t0)']])
        # returns: rs1 a link register, rd none (c.jr too), or t1
        ret = r.choice([['jr %s' % link], self.norvc('jalr zero, 0(%s)' % link),
                        ['jalr t1, 0(%s)' % link]])
        code, c = self.leaf()
        return call + ['j %s' % after, '%s:' % body] + code + ret + \
            ['%s:' % after], len(call) + 2 + c + 1

    def stmt_swap(self):
        """Two co-routines of this function that swap with jalr ra, 0(t0),
        c.jalr t0 (the same) or jalr t0, 0(ra): the first is entered by a
        call through the one link register, the swap goes back to it with
        the other, and its return through that one comes after the swap."""
        r = self.r
        first, second = self.new_label('co'), self.new_label('cs')
        code1, c1 = self.leaf()
        code2, c2 = self.leaf()
        if r.randrange(3):
            # t0 links to the first, ra to the second
            call, ret = 'jal t0, %s' % second, 'jr ra'
            swap = r.choice([self.norvc('jalr ra, 0(t0)'), ['jalr t0']])
        else:
            call, ret = 'jal ra, %s' % second, 'jr t0'
            swap = ['jalr t0, 0(ra)']
        return [call, '%s:' % first] + code1 + [ret, '%s:' % second] + \
            code2 + swap, c1 + c2 + 3

    def stmt_mem(self):
        r = self.r
        out = ['la t5, rp_scratch', 'andi t6, s1, 0xf8', 'add t5, t5, t6']
        for _ in range(r.randrange(1, 5)):
            k = r.randrange(6)
            off = r.randrange(0, 8) & ~3
            if k == 0:
                op = r.choice(['lb', 'lbu', 'lh', 'lhu', 'lw'])
                out.append('%s %s, %d(t5)' % (op, r.choice(WORK), off))
            elif k == 1:
                op = r.choice(['sb', 'sh', 'sw'])
                out.append('%s %s, %d(t5)' % (op, r.choice(WORK), off))
            elif k == 2:
                out.append('REG_L a1, 0(t5)')
            elif k == 3:
                out.append('REG_S a2, 0(t5)')
            elif k == 4:
                op = r.choice(['amoadd.w', 'amoswap.w', 'amoxor.w',
                               'amomax.w', 'amominu.w'])
                out.append('%s a3, a4, (t5)' % op)
            else:
                out += ['lr.w a3, (t5)', 'addi a3, a3, 1',
                        'sc.w a4, a3, (t5)']
        return out, len(out)

    def stmt_trap(self):
        k = self.r.randrange(8)
        insn = ['ecall', 'ebreak', 'c.ebreak', '.4byte 0xc0001073',
                '.2byte 0', 'lw t5, 16(zero)', 'sw t5, 16(zero)',
                'FETCH_FAULT'][k]
        if insn == 'FETCH_FAULT':
            return ['call rv_trap_expect', 'li t5, 0x100', 'jalr t5'], 4
        # a7 must not be the library's leave-mode ecall
        return ['call rv_trap_expect', 'li a7, 0', insn], 3

    # --------------------------------------------------------- functions

    def function(self, fn):
        body, cost = self.block(fn, 0, BUDGET - 12)
        frame = (FRAME_SLOTS + 2) * 8
        out = ['.globl rp_f%d' % fn, '.type rp_f%d, @function' % fn,
               '.balign %d' % self.r.choice([2, 4, 64]), 'rp_f%d:' % fn,
               'addi sp, sp, -%d' % frame, 'REG_S ra, 0(sp)'] + body
        self.cost[fn] = cost + 8
        later = [j for j in range(fn + 1, NFUNCS)
                 if self.cost[j] + cost + 8 <= BUDGET]
        out += ['REG_L ra, 0(sp)', 'addi sp, sp, %d' % frame]
        if later and self.r.randrange(4) == 0:
            callee = self.r.choice(later)
            out.append('tail rp_f%d' % callee)
            self.cost[fn] += self.cost[callee]
        else:
            out.append('ret')
        return out

    def program(self):
        funcs = {}
        for fn in reversed(range(NFUNCS)):
            funcs[fn] = self.function(fn)
        lines = ['#if __riscv_xlen == 64',
                 '#define REG_S sd', '#define REG_L ld',
                 '#define PTR .dword', '#define PTR_BYTES 8',
                 '#define LOG_PTR 3',
                 '#else',
                 '#define REG_S sw', '#define REG_L lw',
                 '#define PTR .word', '#define PTR_BYTES 4',
                 '#define LOG_PTR 2',
                 '#endif',
                 '.section .text.rp, "ax"',
                 # a recursion a0 calls deep, deeper than return stacks
                 '.globl rp_rec', 'rp_rec:',
                 'beqz a0, 1f', 'addi sp, sp, -16', 'REG_S ra, 0(sp)',
                 'addi a0, a0, -1', 'call rp_rec', 'REG_L ra, 0(sp)',
                 'addi sp, sp, 16', '1: ret',
                 # rp_run(seed): every function once; returns the state
                 '.globl rp_run', 'rp_run:',
                 'addi sp, sp, -16', 'REG_S ra, 0(sp)',
                 'REG_S s1, 8(sp)', 'ori s1, a0, 1']
        lines += ['call rp_f%d' % fn for fn in range(NFUNCS)]
        lines += ['mv a0, s1', 'REG_L ra, 0(sp)', 'REG_L s1, 8(sp)',
                  'addi sp, sp, 16', 'ret']
        for fn in range(NFUNCS):
            lines += funcs[fn]
        lines += ['.section .rodata.rp, "a"'] + self.data
        lines += ['.bss', '.balign 8', '.globl rp_scratch', 'rp_scratch:',
                  '.space 264']
        return lines


def main():
    seed, output = int(sys.argv[1]), sys.argv[2]
    lines = Gen(seed, '--call-next' in sys.argv[3:],
                '--link-regs' in sys.argv[3:],
                '--fences' in sys.argv[3:]).program()
    with open(output, 'w') as f:
        f.write('/* generated by gen-random-guest.py %d */\n' % seed)
        for line in lines:
            indent = '' if line.endswith(':') or line.startswith('#') \
                else '    '
            f.write(indent + line + '\n')


if __name__ == '__main__':
    main()
