# SPDX-License-Identifier: MIT
# Hash- and string-heavy Perl for the benchmarks: generates N lines of
# pseudo-random text (fixed seed, so every run makes the same calls), then
# does what a log or text report script does with them: split into words,
# count them in a hash, a regex rewrite per line, an index of words by their
# first letter, a sort by count and a formatted report.
# usage: perl text_words.pl [N]   (default 20000)
use strict;
use warnings;

my $n = shift // 20000;
my @syll = qw(ka lo mi ne su ta ri po ve xu an el ir om ul);
my $seed = 12345;
sub rnd { $seed = ($seed * 1103515245 + 12345) % 2147483648; return $seed % $_[0]; }

my (@lines, %count, %by_first, %len_hist);
for my $i (1 .. $n) {
    my @w;
    for (1 .. 3 + rnd(10)) {
        my $word = join '', map { $syll[rnd(scalar @syll)] } 1 .. 1 + rnd(3);
        push @w, $word;
    }
    push @lines, join(' ', @w) . " #$i";
}
for my $line (@lines) {
    (my $clean = $line) =~ s/\s*#\d+$//;
    $clean =~ s/(\w)(\w*)/\u$1$2/g;
    for my $word (split / /, lc $clean) {
        $count{$word}++;
        push @{ $by_first{ substr $word, 0, 1 } }, $word;
        $len_hist{ length $word }++;
    }
}
my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 19];
my $report = '';
$report .= sprintf "%-12s %6d\n", $_, $count{$_} for @top;
for my $letter (sort keys %by_first) {
    my %seen;
    my @uniq = grep { !$seen{$_}++ } @{ $by_first{$letter} };
    $report .= sprintf "%s: %d words, %d distinct\n", $letter, scalar @{ $by_first{$letter} }, scalar @uniq;
}
$report .= "$_ letters: $len_hist{$_}\n" for sort { $a <=> $b } keys %len_hist;
print length($report), " ", scalar(keys %count), "\n";
