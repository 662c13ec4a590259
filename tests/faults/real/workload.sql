-- A sqlite3 workload for the real-program differential (real_programs.py).
-- Run as: sqlite3 :memory: ".output FILE" ".read workload.sql".
create table n(i integer primary key, sq integer, txt text);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 50000)
insert into n select x, x * x, printf('%08x-%s', x * 2654435761 % 4294967296, hex(x)) from c;
create index n_txt on n(txt);
create table g as select i % 101 as k, count(*) as cnt, sum(sq) as s, group_concat(substr(txt, 1, 3), '') as cat
  from n group by i % 101;
select k, cnt, s, length(cat), substr(cat, 1, 12) from g order by s desc limit 20;
select count(*), min(txt), max(txt) from n where txt like '%a%';
select json_object('n', count(*), 'avg', avg(sq)) from n where i % 7 = 3;
select a.k, b.k, a.cnt + b.cnt from g a join g b on a.k = (b.k * 3) % 101 order by 1, 2 limit 15;
update n set txt = upper(txt) where i % 3 = 0;
delete from n where i % 5 = 0;
select count(*), sum(length(txt)), total(sq) from n;
vacuum;
select quote(zeroblob(4)), typeof(1.5), round(3.14159265358979, 6);
