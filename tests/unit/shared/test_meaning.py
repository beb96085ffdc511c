"""The meaning checks: a sentence that keeps its quote's words but turns its meaning is
refused, by the check that catches it; a faithful rewording is kept."""

from __future__ import annotations

import pytest

from shared.verification.clauses import clauses
from shared.verification.figure_words import order_word_at
from shared.verification.grounding import check_grounding
from shared.verification.meaning import contradicts

QUOTE = "Deleted rows are not physically removed until VACUUM runs."
COMMUTE = "Average commute time was 25 minutes in the suburbs and 40 minutes in the city centre."
TIMEOUTS = "The default connect timeout is 10 seconds, and the default write timeout is 60 seconds."
RIDES = "The cyclist rode the 10 kilometres in 14 minutes and the 40 kilometres in 58 minutes."


@pytest.mark.parametrize(("sentence", "quotes", "category"), [
    ("Deleted rows are physically removed until VACUUM runs.", [QUOTE], "negation"),
    ("The cache is unsafe under concurrent writes.", ["The cache is safe under concurrent writes."], "negation"),
    ("All threads share the heap.", ["Some threads share the heap."], "quantifier"),
    ("The planner always picks an index scan.", ["The planner usually picks an index scan."], "quantifier"),
    ("Only superusers can create extensions.", ["Superusers can create extensions."], "quantifier"),
    ("A thread crashes the whole process.", ["A thread can crash the whole process."], "modality"),
    ("Statins cause lower mortality.", ["Statins are associated with lower mortality."], "modality"),
    ("Connection pooling increases latency.", ["Connection pooling reduces latency."], "comparative"),
    ("The server calls the client.", ["The client calls the server."], "role"),
    ("The drive reads at 3,500 GB/s.", ["The drive reads at 3,500 MB/s."], "number"),
    ("Redis keeps 40 GB in memory.", ["Redis keeps data in memory.", "The cluster stores 40 GB on disk."], "merge"),
    ("Redis is single threaded.", ["PostgreSQL is single threaded.", "Redis keeps data in memory."], "merge"),
    ("The cache doubles throughput for writes.", ["The cache doubles throughput for reads."], "comparative"),
    ("Raising the minimum wage reduced employment.", ["Raising the minimum wage did not reduce employment."],
     "negation"),
    ("Locks are held.", ["Locks are held within a partition."], "scope"),
    ("Wind and solar produced 2,340 GWh of electricity.",
     ["Wind and solar together generated 2,340 terawatt-hours of electricity."], "number"),
    ("Most of its speakers are younger than 60.", ["Most of its speakers are over the age of 60."], "comparative"),
    ("Wheat prices climbed for the third consecutive month.", ["Wheat prices declined for the third consecutive month."],
     "comparative"),
    ("Shares soared after the announcement.", ["Shares plummeted after the announcement."], "comparative"),
    ("Many of the village's medieval houses survived the fire.",
     ["Only two of the village's medieval houses survived the fire."], "quantifier"),
    ("Most of the guild's records survive.", ["Only a handful of the guild's records survive."], "quantifier"),
    ("Only two of the samples showed contamination.", ["At least two of the samples showed contamination."],
     "quantifier"),
    ("The anticoagulant doubled the risk of bleeding.",
     ["In patients over 75, the anticoagulant doubled the risk of bleeding."], "scope"),
    ("The vulnerability lets a remote attacker execute arbitrary code.",
     ["The vulnerability lets an attacker read memory."], "terms"),
    ("Most invoices must carry a purchase order number.", ["Every invoice must carry a purchase order number."],
     "quantifier"),
    ("The ferry is occasionally cancelled in storms.", ["The ferry is often cancelled in storms."], "quantifier"),
    ("Tenants are required to test smoke alarms monthly.",
     ["It is recommended that tenants test smoke alarms monthly."], "modality"),
    ("The code encourages landlords to fit smoke alarms.", ["The code requires landlords to fit smoke alarms."],
     "modality"),
    ("Sales fell 8% to $2.1 billion.", ["Sales were $2.1 billion, up 8%."], "comparative"),
    ("Exports have fallen by a third since 2010.", ["Exports have halved since 2010."], "number"),
    ("Ugandan trials found higher yields.", ["Trials in Kenya found higher yields."], "name"),
    ("Release 2.3 dropped Python 3.8 and added a plugin system.",
     ["Release 2.3 dropped Python 3.8.", "Release 2.4 added a plugin system."], "merge"),
    ("Economists blame the slump mainly on tariffs.", ["Some economists blame the slump mainly on tariffs."],
     "quantifier"),
    ("The library supports Linux, macOS and Windows, with Linux preferred for servers.",
     ["The library supports Linux, macOS and Windows."], "terms"),
    ("Vaccine A cut infections by 40% and shortened hospital stays by 3 days.",
     ["Vaccine A reduced infections by 40%.", "Vaccine B shortened hospital stays by 3 days."], "merge"),
    # "twice a week" and "minus 30 degrees" are figures
    ("Members train at least twice a week.", ["Members train at least three times a week."], "number"),
    ("The sensor works at temperatures down to 30 degrees Celsius.",
     ["The sensor works at temperatures down to minus 30 degrees Celsius."], "number"),
    # a list moved to another preposition
    ("Pepsin breaks peptides into protein and amino acids.", ["Pepsin breaks protein into peptides and amino acids."],
     "role"),
    # "than in any" with no superlative in the quote broadens it
    ("Coffee exports rose faster than in any other region.",
     ["Coffee exports rose faster in the highlands than in the lowlands."], "scope"),
    # a day of the month is no span of days
    ("The fault was found on 4 May and fixed four days later.",
     ["The fault was found on 4 May and fixed four weeks later."], "number"),
    # a figure said of what its quote gives another figure of the same unit
    ("Average commute time in the suburbs was 40 minutes.", [COMMUTE], "number"),
    # ... where each figure of the list has its own subject, or a figure of another unit
    ("The connect timeout defaults to 60 seconds.", [TIMEOUTS], "number"),
    ("The main stage drew 62 percent of the visitors.",
     ["Attendance reached 62 percent of capacity, with the main stage drawing 30 percent of the visitors."], "number"),
    ("The cyclist rode the 40 kilometres in 14 minutes.", [RIDES], "number"),
    # a rate given another period
    ("The bond pays a quarterly coupon of 2.5 percent.", ["The bond pays an annual coupon of 2.5 percent."], "number"),
    ("Members pay 40 euros a month.", ["Members pay 40 euros every year."], "number"),
    # the words before the verb and after it change places, read whole
    ("The standby servers copy their journals to the main server.",
     ["The main server copies its journal to the standby servers."], "role"),
    ("In the survey, a drop in rents led to rising vacancy rates.",
     ["In the survey, rising vacancy rates led to a drop in rents."], "role"),
    # what the quote states as proved or to come is not a mere possibility
    ("Tests suggested that the coating might stop corrosion.", ["Tests proved that the coating stops corrosion."],
     "modality"),
    ("The museum may reopen on 3 May.", ["The museum will reopen on 3 May."], "modality"),
    # a phrase that narrows a condition further is not dropped from it
    ("The vaccine cut hospital admissions among children.",
     ["In the study, the vaccine cut hospital admissions among children with asthma."], "scope"),
    ("The crew won 9 out of 12 races.", ["The crew won 9 of its 14 races."], "number"),
    ("Add a quarter of a litre of stock.", ["Add 500 millilitres of stock."], "number"),
    ("Copper corrodes quickly.", ["Copper corrodes quickly in the presence of chlorides."], "scope"),
    # what another clause of the quote denies is not stated
    ("The film won the Palme d'Or.", ["The film was nominated for the Palme d'Or but did not win."], "negation"),
    # an ordinal swapped in the subject keeps no subject ("second" may be a verb elsewhere)
    ("The first round of talks produced a draft treaty.",
     ["The first round of talks produced no agreement.", "The second round produced a draft treaty."], "merge"),
    # a capital letter names a thing ("T cells"): swapped, it swaps the parties
    ("Helper T cells activate the B cells that make antibodies.",
     ["Helper B cells activate the T cells that make antibodies."], "role"),
    # a change said by a verb of a multiple is a figure its quotes must give
    ("The new turbine cut fuel use by 20 percent and doubled its output.",
     ["The new turbine cut fuel use by 20 percent."], "number"),
    # a "with" phrase that narrows the quote's subject is not dropped
    ("Members are entitled to free parking.", ["Members with at least five years of service are entitled to free parking."],
     "scope"),
    # money in another unit is another figure
    ("Each share pays a dividend of 30 euros.", ["Each share pays a dividend of 0.30 euros."], "number"),
    # a loss with no amount is no fall: "fell" is a direction the sentence adds
    ("Water use fell in the old district.", ["Water is lost through leaks in the old district."], "comparative"),
    # a period after "of" is still a period
    ("Invoices are sent on the last working day of each month.",
     ["Invoices are sent on the last working day of each quarter."], "number"),
    # the same time after "after" in both is no order of two things: the verb's parties swap
    ("After the audit, the bank sued the supplier for fraud.", ["The supplier sued the bank for fraud after the audit."],
     "role"),
    ("The council fined the landlord before the hearing.", ["The landlord fined the council before the hearing."],
     "role"),
    # a capital "A" after a word names a thing ("kinase A"): no article before the verb
    ("The receptor activates protein kinase A.", ["Protein kinase A activates the receptor."], "role"),
    ("The jobless rate for 18-to-30-year-olds fell to 9.1%.",
     ["Unemployment among people aged 18 to 24 fell to 9.1 percent."], "number"),
    ("The geyser has not erupted since 1962.", ["The geyser erupted in 1962."], "negation"),
    ("The trial established that the vaccine prevents infection.",
     ["The trial suggested that the vaccine may prevent infection."], "modality"),
    # directions in a compound's part, of distance, in time and of verbs that outdo
    ("Rainfall this June was the third-highest on record.", ["Rainfall this June was the third-lowest on record."],
     "comparative"),
    ("The moon orbits farther from its planet than the other moons do.",
     ["The moon orbits closer to its planet than the other moons do."], "comparative"),
    ("The chapel was built about a century after the castle.", ["The chapel predates the castle by about a century."],
     "comparative"),
    ("The first-year students outscored the final-year students on the quiz.",
     ["The first-year students scored lower on the quiz than the final-year students."], "comparative"),
    # the same bound after "than" in both: the verb's parties are what is swapped
    ("Column stores outperformed row stores on tables larger than ten million rows.",
     ["Row stores outperformed column stores on tables larger than ten million rows."], "role"),
    # a converse said with its sides where they were ("lost to" for "beat"), or the other side
    ("Eastfield lost 2–0 to Riverton in the semi-final.", ["Eastfield beat Riverton 2–0 in the semi-final."],
     "comparative"),
    ("The prosecution appealed the verdict.", ["The defence appealed the verdict."], "comparative"),
    # a party the quote's verb reaches through "under"/"with" made its object
    ("The young violinist studied Clara Weiss in Vienna.", ["The young violinist studied under Clara Weiss in Vienna."],
     "role"),
    # a cause that joins what two quotes state apart, none of them giving one
    ("The firm's 9 percent profit rise in 2023 was driven by a merger that cut 400 jobs.",
     ["The firm's profit rose 9 percent in 2023.", "In 2023 the firm completed a merger that cut 400 jobs."], "merge"),
    ("Ticket sales fell by a fifth because of the new stadium that opened in May.",
     ["Ticket sales fell by a fifth this season.", "The new stadium opened in May."], "merge"),
    # "and" with an auxiliary opens a predicate of its own, said of the subject before it
    ("Drug K lowered cholesterol by 30 percent and was associated with fewer strokes.",
     ["Drug K lowered cholesterol by 30 percent.", "Drug M was associated with fewer strokes."], "merge"),
    ("Version 2.1 removed the legacy parser and was the first release to support plugins.",
     ["Version 2.1 removed the legacy parser.", "Version 2.2 was the first release to support plugins."], "merge"),
    # ... and one head with a word in place of another is another thing ("northern", "southern")
    ("The northern line carried 90,000 passengers a day and was extended by 8 km in 2020.",
     ["The northern line carries about 90,000 passengers a day.", "The southern line was extended by 8 km in 2020."],
     "merge"),
    # the subject of a verb behind a frame ("was found to", "tended to") is the frame's
    ("Among the volunteers, headaches tended to precede the fever.",
     ["The fever was shown to precede the headaches among the volunteers."], "role"),
    # a name where its quote puts another name it also has, in the same verb's frame
    ("Designed by Ada Moreno, the bridge was later widened under Tom Hale.",
     ["The bridge was designed by Tom Hale and later widened under Ada Moreno."], "role"),
    ("Prices are set mainly by the Treasury, with the Central Bank advising on the timing.",
     ["The Central Bank sets prices, with the Treasury advising on the timing."], "role"),
    # a change verb's second object, which the quote gives the other direction
    ("The new pump lowers both noise levels and energy use.",
     ["The new pump lowers noise levels but raises energy use."], "comparative"),
    ("The bypass has trimmed 15 minutes from commute times.", ["Commute times are 15 minutes longer since the bypass opened."],
     "comparative"),
    # a day with a fixed date is read as that date only where the quote gives it
    ("The old station closed for good on Boxing Day 2019.", ["The old station closed for good on 24 December 2019."],
     "name"),
    ("The old station closed for good on Boxing Day 2019.", ["The old station closed for good on 26 December 2018."],
     "number"),
    # a noun the quote bounds by a figure ("adults over 65"), kept without it
    ("The vaccine is recommended for adults with diabetes.", ["The vaccine is recommended for adults over 65 with diabetes."],
     "scope"),
    ("Shipping is free for customers in the EU.", ["Shipping is free for customers in the EU on purchases over €40."],
     "scope"),
    # a frequency none of the quotes states
    ("The council will run weekly bus services to the new hospital from June.",
     ["The council will run bus services to the new hospital from June."], "quantifier"),
    ("Cutting the bus subsidy in April sent ridership down 9 percent over the summer.",
     ["The city cut its bus subsidy in April.", "Ridership fell 9 percent over the summer."], "merge"),
    # a recurring time it holds at ("on Fridays"), and a dated setting ("In the 2021 cohort"), dropped
    ("The library is open until 10 pm.", ["The library is open until 10 pm on Fridays."], "scope"),
    ("Readmission rates fell to 9%.", ["In the 2021 cohort, readmission rates fell to 9%."], "scope"),
    # an inference none of the quotes draws, added after a pause
    ("Divers found the wreck at a depth of 40 metres, suggesting the ship sank during a storm.",
     ["Divers found the wreck at a depth of 40 metres."], "terms"),
    # what the quote's "avoid" keeps from happening, said as what is aimed at
    ("Crews lowered the reservoir so as to flood the valley.", ["Crews lowered the reservoir to avoid flooding the valley."],
     "negation"),
])
def test_a_turned_sentence_is_refused_by_the_check_that_catches_it(sentence: str, quotes: list[str],
                                                                      category: str) -> None:
    g = check_grounding(sentence, quotes)
    assert not g.ok and g.category == category, g


@pytest.mark.parametrize(("sentence", "quotes"), [
    ("DELETE removes rows from the table.", ["Rows are deleted from the table by DELETE."]),
    ("One of the threads holds the lock.", ["A thread holds the lock."]),
    ("The service has 1.2 million users.", ["The service has 1,200,000 users."]),
    ("Heat pumps cut emissions by 60 per cent.", ["Heat pumps cut emissions by 60%."]),
    ("Connection pooling lowers latency.", ["Connection pooling reduces latency."]),
    ("Y-trees are slower than B-trees for range scans.", ["B-trees are faster than Y-trees for range scans."]),
    ("Both Redis and Memcached keep data in memory.", ["Redis keeps data in memory.", "Memcached keeps data in memory."]),
    ("Adding a replica reduced latency and increased throughput.",
     ["Adding a replica reduced latency.", "Adding a replica increased throughput."]),
    ("Statins may lower mortality.", ["Statins lower mortality."]),
    ("Connection pooling leads to a reduction in latency.", ["Connection pooling reduces latency."]),
    ("Higher interest rates reduce borrowing.", ["Borrowing falls when interest rates rise."]),
    ("Wind and solar produced 2,340 TWh of electricity.",
     ["Wind and solar together generated 2,340 terawatt-hours of electricity."]),
    ("Most of its speakers are older than 60.", ["Most of its speakers are over the age of 60."]),
    ("Wheat prices climbed in March.", ["Wheat prices rose in March."]),
    ("Just two of the village's medieval houses survived the fire.",
     ["Only two of the village's medieval houses survived the fire."]),
    ("Shares plunged after the announcement.", ["Shares fell sharply after the announcement."]),
    ("Hatching was 20% lower in shaded nests than in nests that were not shaded.",
     ["Shaded nests had 20% lower hatching than unshaded nests."]),
    ("Tablets should be stored below 25°C.", ["Tablets must be stored below 25°C."]),
    ("Sales grew 8% to $2.1 billion.", ["Sales were $2.1 billion, up 8%."]),
    ("Ridership climbed back to 85% of its 2019 level.", ["Ridership recovered to 85% of its 2019 level."]),
    ("Exports have fallen by half since 2010.", ["Exports have halved since 2010."]),
    ("In Kenyan field trials the variety out-yielded maize.",
     ["In field trials in Kenya, the variety yielded more than maize."]),
    ("Eight segments make up the dish's 4.2-metre-diameter reflector.",
     ["The dish's reflector, 4.2 metres in diameter, is made of eight segments."]),
    ("Release 2.3 dropped Python 3.8 and added a plugin system.",
     ["Release 2.3 dropped Python 3.8.", "Release 2.3 added a plugin system."]),
    ("The museum relies mainly on ticket sales for its income.", ["Most of the museum's income comes from ticket sales."]),
    ("The creole has seven vowels and lacks the open and closed vowel distinction of French.",
     ["The creole has seven vowels.", "It lacks the distinction between open and closed vowels found in French."]),
    ("The canal took until 1914 to finish, though digging had begun in 1904.",
     ["Digging of the canal began in 1904 and it was not finished until 1914."]),
    # "overtaking" is a rise past the thing overtaken, as "exceeded" is
    ("In March, exports exceeded imports for the first time since 2019.",
     ["Exports reached 4 billion dollars in March, overtaking imports for the first time since 2019."]),
    # "and surpassing" goes on from the "with" phrase, not from the sentence's subject
    ("The region grew 60% of the crop in 2023, with Kerala alone growing 20% and surpassing Goa for the first time.",
     ["The region grew 60% of the country's crop in 2023.",
      "Kerala alone grew 20% of the crop in 2023, surpassing Goa for the first time."]),
    # the name in "GPL-3.0-licensed" is "3.0"
    ("The GPL-3.0-licensed tool runs on Linux.", ["The tool is released under the GPL 3.0 and runs on Linux."]),
    # "Compared with X, …" names what the quote's "than X" does ("less than five hours"
    # bounds a figure; the comparison is the later "than"), and a participle of the base,
    # "receiving", may go unsaid
    ("Compared with drivers who slept eight hours, those who slept under five hours made 30 percent more errors.",
     ["Drivers who slept less than five hours made 30 percent more errors than those who slept eight hours."]),
    ("Compared with placebo, the vaccine cut infections by 40%.",
     ["People given the vaccine had 40% fewer infections than those receiving placebo."]),
    # "all" or "each" of a set the quote counts is that set
    ("The trial's 240 volunteers, all aged 18 to 40, were recruited in two cities.",
     ["The trial recruited 240 volunteers aged 18 to 40 in two cities."]),
    ("Twelve steel cables, each anchored in rock, hold the bridge's 300-metre deck.",
     ["The bridge's 300-metre deck is held by 12 steel cables anchored in rock."]),
    # "not reached since 2012" is "the highest since 2012"
    ("Wheat prices climbed to 310 euros a tonne in May, a level not reached since 2012.",
     ["Wheat prices rose to 310 euros a tonne in May, their highest level since 2012."]),
    # "twice a week" is a figure: "two or more times a week" restates "at least twice a week"
    ("Patients who swam two or more times a week reported better sleep.",
     ["Patients who swam at least twice a week reported better sleep."]),
    # the members of a list a preposition governs, in either order
    ("In the stomach, protein is broken by pepsin into peptides and amino acids.",
     ["Pepsin breaks protein into amino acids and peptides in the stomach."]),
    # a share compares by how much as a figure does: "a quarter below" is "a quarter less than"
    ("Spring rainfall was 120 mm, roughly a quarter less than the long-term average.",
     ["Spring rainfall totalled 120 mm, about a quarter below the long-term average."]),
    # "than in any year since" restates the quote's superlative "since"
    ("Coffee prices in 2022 were higher than in any year since 1998.",
     ["Coffee prices in 2022 were the highest annual prices since 1998."]),
    # the other quote's subject is the clause's own verb said as a noun
    ("The ferry has two decks and began operating in 2012.",
     ["The ferry has two decks.", "Scheduled operation began in 2012."]),
    # "a handful" is "a few"
    ("Apart from a few addressed to priests in Greek, the letters were mostly written in Latin.",
     ["Most of the letters were written in Latin, although a handful addressed to priests are in Greek."]),
    # a loss of an amount is a fall by it
    ("Storage at 40 °C cut the vaccine's potency by about half.",
     ["The vaccine lost roughly half of its potency when stored at 40 °C."]),
    # money in its hundredths, a change "year on year", a halving as a percentage
    ("Each share pays a dividend of 30 euro cents.", ["Each share pays a dividend of 0.30 euros."]),
    ("Freight volumes grew by 6% on the previous year.", ["Freight volumes rose 6 percent year on year."]),
    ("Fees were cut by 50 percent in 2021.", ["Fees were halved in 2021."]),
    # a figure kept with what its quote says it of, alone or with the others
    ("Average commute time in the city centre was 40 minutes.", [COMMUTE]),
    ("Commutes averaged 25 minutes in the suburbs against 40 minutes in the city centre.", [COMMUTE]),
    ("The write timeout defaults to 60 seconds.", [TIMEOUTS]),
    ("Members pay 40 euros a month, billed monthly.", ["Members pay a monthly fee of 40 euros."]),
    # a sentence may claim less than its quote
    ("The coating may stop corrosion.", ["The coating stops corrosion."]),
    # ... nor the other side of a comparison inside it
    ("Children with asthma who took the drug had fewer admissions than those taking a placebo.",
     ["Among children with asthma, those who took the drug had fewer admissions than those who took a placebo."]),
    # a share said of the quote's part and whole; a fraction of a measure; the year before a
    # year the quote states; "proved effective" as what a thing turned out to be
    ("The crew won 9 out of 12 races.", ["The crew won 9 of its 12 races."]),
    ("Add a quarter of a litre of stock.", ["Add 250 millilitres of stock."]),
    ("In 2019 the port handled 3.1 million containers, against 2.8 million in 2018.",
     ["The port handled 3.1 million containers in 2019, up from 2.8 million the year before."]),
    ("In the trial, the drug proved 80% effective.", ["In the trial, the drug was 80 percent effective."]),
    # "in the presence of X" is kept by saying X
    ("Without a nickel catalyst, the reaction does not proceed.",
     ["The reaction proceeds only in the presence of a nickel catalyst."]),
    ("Copper corrodes quickly when chlorides are present.", ["Copper corrodes quickly in the presence of chlorides."]),
    ("The team won the cup.", ["The team won the cup but did not win the league."]),
    ("Plan B was adopted in March.", ["In March the board adopted plan B."]),
    ("The plant's output doubled to 80 megawatts.", ["The plant's output rose from 40 megawatts to 80 megawatts."]),
    ("Sales of the model tripled last year.", ["Sales of the model rose by a factor of three last year."]),
    ("Long-serving members are entitled to free parking.",
     ["Members with at least five years of service are entitled to free parking."]),
    # "May" the month hedges nothing
    ("The shop reopens on 3 May.", ["The shop will reopen on 3 May after repairs."]),
    # ... but not an agent or a relative clause, which order their sides by other words
    ("The club, fined 20,000 euros by the league, said it would appeal.",
     ["The league fined the club 20,000 euros.", "The club said it would appeal."]),
    ("The cyclist rode the 40 kilometres in 58 minutes.", [RIDES]),
    # a day of the month beside a span that is the quote's
    ("The fault was found on 4 May and fixed four weeks later.",
     ["The fault was found on 4 May and fixed four weeks later, in June."]),
    # "each quarter-litre glass" is no period
    ("Each quarter-litre glass holds 27 g of sugar.", ["Each quarter-litre glass of the drink contains 27 g of sugar."]),
    # "a number of" limits as "several" does
    ("Auditors found errors in a number of the branch ledgers.",
     ["Auditors found errors in several of the branch ledgers."]),
    # "before"/"after" that order two things still do: the sides stay with their word
    ("The verdict came after the trial ended.", ["The trial ended before the verdict came."]),
    ("After the hearing, the landlord paid the fine.", ["The landlord paid the fine after the hearing."]),
    # "ever" after a negation claims no record; "has not … since" a year is "last … in" it
    ("Opening a socket without ever closing it triggers a linter warning rather than an error.",
     ["The linter emits a warning, but not an error, when a socket is opened and never closed."]),
    ("The geyser has not erupted since 1962.", ["The geyser last erupted in 1962."]),
    # an age range joined by hyphens is two figures, not a name; "to establish" a thing proves nothing
    ("The jobless rate for 18-to-24-year-olds fell to 9.1%.",
     ["Unemployment among people aged 18 to 24 fell to 9.1 percent."]),
    ("Thirty teachers came together to establish the school in 1921.",
     ["The school was founded in 1921 by a group of thirty teachers."]),
    ("The young violinist studied under Clara Weiss in Vienna.",
     ["In Vienna, the young violinist studied under Clara Weiss."]),
    ("Riverton lost 2–0 to Eastfield in the semi-final.", ["Eastfield beat Riverton 2–0 in the semi-final."]),
    ("The club was beaten 3–1 by Riverton in the final.", ["It lost the final to Riverton, 3–1."]),
    # a verb that outdoes names what its quote compares with; "flare-ups" hold no particle
    ("Pupils in the programme outscored a matched group by 6 points.",
     ["Pupils in the programme scored 6 points higher than a matched group."]),
    ("Smoke, pollen and cold air frequently set off flare-ups in people with asthma.",
     ["People with asthma often experience flare-ups triggered by smoke, pollen and cold air."]),
    # a quote that speaks of what another named ("For most of its length it…", "… approved it")
    ("The 12-kilometre canal runs through a tunnel for most of its length.",
     ["The canal is 12 kilometres long.", "For most of its course it runs through a tunnel."]),
    ("After passing the senate on 12 May, the bill was signed by the governor without changes two weeks later.",
     ["The bill passed the senate on 12 May.", "The governor signed it without changes two weeks later."]),
    # "and has to" opens a predicate of its own, resting on its own quote
    ("The drug is taken as three doses a month apart and has to be kept below 25 °C.",
     ["The drug is given as three doses a month apart.", "It must be stored below 25 degrees Celsius."]),
    # ... a cause a quote gives, or "is due to" a date, joins nothing
    ("The firm's 9 percent profit rise in 2023 was driven by a merger that cut 400 jobs.",
     ["The firm's profit rose 9 percent in 2023.", "The rise was driven by a merger that cut 400 jobs."]),
    ("Convicted of theft on Monday, the driver is due to be sentenced on 4 June.",
     ["The driver was convicted of theft on Monday.", "Sentencing is scheduled for 4 June."]),
    # a quote that names the carried subject after a participle speaks of it
    ("In the study, the new tablet lowered blood pressure by 8 mmHg and was associated with dizziness in 4 percent"
     " of patients.", ["The new tablet lowered blood pressure by 8 mmHg compared with placebo.",
                       "Dizziness was reported in 4% of patients receiving the new tablet."]),
    # a frame's subject read through the frame keeps a faithful restatement
    ("Among the volunteers, the fever tended to precede the headaches.",
     ["The fever was shown to precede the headaches among the volunteers."]),
    # a name that holds the quote's name ("Peru's Urubamba valley") or one after a noun
    # ("one orbit of Venus") is no exchange
    ("The oldest remains come from Peru's Urubamba valley.", ["The oldest remains come from the Urubamba valley in Peru."]),
    ("A single orbit of Venus around the Sun takes 225 Earth days.", ["Venus takes 225 Earth days to complete one orbit of the Sun."]),
    # both objects of the quote's change, or the second one's own change, restated
    ("The new pump lowers both noise levels and energy use.", ["The new pump lowers noise levels and energy use."]),
    ("The new pump lowers noise levels and raises energy use.", ["The new pump lowers noise levels but raises energy use."]),
    ("The bypass has trimmed 15 minutes from commute times.", ["Commute times are 15 minutes shorter since the bypass opened."]),
    # "its" after a fronted figure with a comma in it ("At 1,280 metres, its main span…") points back
    ("Completed in 1932, the Harbour Arch had the world's longest steel arch span, at 1,650 feet, until 1977.",
     ["The Harbour Arch opened in 1932.",
      "At 1,650 feet, its main span was the longest of any steel arch in the world until 1977."]),
    # set phrases and days with a fixed date, in the quote's wording
    ("The old station closed for good on Boxing Day 2019.", ["The old station closed for good on 26 December 2019."]),
    ("Two of the crew lost their lives in the fire.", ["Two crew members died in the fire."]),
    # ... the bound restated, or a span of time ("over six weeks"), which bounds no noun
    ("The vaccine is recommended for adults older than 65 with diabetes.",
     ["The vaccine is recommended for adults over 65 with diabetes."]),
    ("Shipping is free on purchases of more than €40.", ["Shipping is free on purchases over €40."]),
    # a change named again ("caused the reduction") that the quote states; a condition's
    # compound said in its words ("under moderate emissions" for "a moderate-emissions scenario")
    ("The survey tied daily walking to lower blood pressure but could not show that walking caused the decrease.",
     ["Daily walking was associated with lower blood pressure, although the survey could not establish causation."]),
    ("Under high emissions, summers in the city are expected to be 4 degrees warmer by 2080.",
     ["Summers in the city are projected to warm by 4 degrees by 2080 under a high-emissions scenario."]),
    # a word both clauses share that may be a verb, where another surely is ("demand")
    ("Peak demand on the network hit 48 gigawatts on the morning of 3 February.",
     ["On the morning of 3 February, network demand peaked at 48 GW."]),
    ("By 2022, about a third of the Douro valley farms in the study had taken up cover crops.",
     ["Roughly 33 percent of the studied farms in the Douro valley had adopted cover crops by 2022."]),
    # a verb of change with no object says what underwent it ("hectares burned"); a
    # participle after its noun is said of it as done to it ("patients enrolled in")
    ("Some 2,400 hectares burned in the region's 2022 fire season.",
     ["The 2022 fire season in the region burned 2,400 hectares."]),
    ("Men made up 40 percent of the 600 patients enrolled in the study.",
     ["Of the 600 patients enrolled in the study, 40 percent were men."]),
    ("On Fridays the library is open until 10 pm.", ["The library is open until 10 pm on Fridays."]),
    ("In 2021, readmission rates in the cohort fell to 9%.", ["In the 2021 cohort, readmission rates fell to 9%."]),
    # an inference the quote draws itself
    ("Divers found the wreck at a depth of 40 metres, suggesting the ship sank in deep water.",
     ["Divers found the wreck at a depth of 40 metres, which suggests the ship sank in deep water."]),
    # a frequency the quote states in other words ("every week")
    ("The council will run weekly bus services to the new hospital from June.",
     ["From June the council will run bus services to the new hospital every week."]),
    # one act seen from each side: "those given the vaccine" are those taking it
    ("Volunteers given the vaccine were half as likely to be hospitalised.",
     ["Volunteers taking the vaccine were half as likely to be hospitalised."]),
    # ... or as what is not to happen
    ("Crews lowered the reservoir so as not to flood the valley.",
     ["Crews lowered the reservoir to avoid flooding the valley."]),
    ("Six weeks of balance training cut falls among residents by a third.",
     ["Balance training over six weeks cut falls among residents by a third."]),
])
def test_a_faithful_rewording_is_kept_as_supported(sentence: str, quotes: list[str]) -> None:
    g = check_grounding(sentence, quotes)
    assert g.ok and g.level == "supported", g


def test_a_sentence_that_is_its_quote_is_quoted() -> None:
    assert check_grounding(QUOTE, [QUOTE]).level == "quoted"
    assert check_grounding("  Deleted rows are not physically removed until VACUUM runs [3]", [QUOTE]).level == "quoted"
    assert check_grounding("VACUUM runs.", ["Deleted rows stay. VACUUM runs."]).level == "quoted"


def test_a_quote_in_other_letter_case_is_not_quoted() -> None:
    """Case tells units apart (megabits from megabytes, milliwatts from megawatts)."""
    assert not check_grounding("The drive reads at up to 7,000 Mb/s.", ["The drive reads at up to 7,000 MB/s."]).ok
    assert not check_grounding("Each cell draws 2 MW.", ["Each cell draws 2 mW."]).ok
    assert check_grounding("the drive reads at up to 7,000 MB/s.", ["The drive reads at up to 7,000 MB/s."]).level \
        == "quoted"


def test_not_since_against_no_superlative_is_a_negation() -> None:
    g = check_grounding("Wheat prices climbed to 310 euros a tonne in May, a level not reached since 2012.",
                        ["Wheat prices rose to 310 euros a tonne in May, a level also reached in 2012."])
    assert not g.ok and g.category == "negation", g


def test_all_before_a_noun_is_no_counted_sets_all() -> None:
    g = check_grounding("The new tariff cuts fees by 5% for all customers.",
                        ["For business customers, the new tariff cuts fees by 5%."])
    assert not g.ok and g.category == "quantifier", g


def test_another_version_in_a_joined_name_is_refused() -> None:
    assert not check_grounding("The GPL-2.0-licensed tool runs on Linux.",
                               ["The tool is released under the GPL 3.0 and runs on Linux."]).ok


def test_than_before_a_figure_bounds_it_and_before_a_thing_compares() -> None:
    assert order_word_at("more than a dozen sites".split(), "than") is None
    assert order_word_at("more than six hours".split(), "than") is None
    assert order_word_at("more grain than a control group".split(), "than") == 2


def test_contradictions_are_told_from_agreement_and_from_unrelated_text() -> None:
    assert contradicts("Threads share memory.", "Threads do not share memory.") == "negation"
    assert contradicts("Latency increases under load.", "Latency decreases under load.") == "comparative"
    assert contradicts("Threads share memory.", "Threads share memory with each other.") is None
    assert contradicts("Threads share memory.", "The harbour froze in 1963.") is None


def test_a_past_event_hedged_is_less_certain_than_its_plain_quote() -> None:
    quote = "The fire was started by a faulty heater in the storeroom, the inspectors concluded."
    g = check_grounding("The fire may have been started by a faulty heater in the storeroom.", [quote])
    assert not g.ok and g.category == "modality", g
    assert check_grounding("A faulty heater in the storeroom started the fire.", [quote]).ok
    # A sentence may still claim less than a quote about what a thing does.
    assert check_grounding("The statin may lower LDL cholesterol in adults.",
                           ["The statin lowers LDL cholesterol in adults."]).ok


def test_an_irregular_past_is_the_verb_roles_turn_on() -> None:
    quote = "Rising rents drove the growth in commuting from the outer suburbs, the council said."
    g = check_grounding("The growth in commuting from the outer suburbs drove rising rents, the council said.",
                        [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("The growth in commuting from the outer suburbs was driven by rising rents.", [quote]).ok


def test_a_participle_joining_two_quotes_as_cause_is_a_merge() -> None:
    quotes = ["The frost cut apple yields across the valley by 30%.", "Cider prices in the valley rose 12% that autumn."]
    g = check_grounding("The frost cut apple yields across the valley by 30%, pushing cider prices up 12% that autumn.",
                        quotes)
    assert not g.ok and g.category == "merge", g


def test_a_figure_moved_onto_another_quotes_thing_is_refused() -> None:
    quotes = ["The telescope survey found 9 new comets in 2019.", "In 2022, the same survey reported 41 new asteroids."]
    g = check_grounding("The telescope survey found 41 new comets.", quotes)
    assert not g.ok and g.category == "number" and "9 new comets" in g.reason, g
    cohorts = ["The 2018 intake had a pass rate of 81%.", "The 2020 intake reported a dropout rate of 6% in year one."]
    g = check_grounding("The 2020 intake had a pass rate of 81% and a dropout rate of 6% in year one.", cohorts)
    assert not g.ok and g.category == "number", g
    # A figure derived from the quote's own is still its own, and a figure in no quote is reported as such.
    assert check_grounding("The survey found more than 1,200 new comets.",
                           ["The survey found 1,214 new comets.", "It found 300 new asteroids."]).ok
    g = check_grounding("The telescope survey found 15 new comets.", quotes)
    assert not g.ok and g.reason == "the figure 15 is not in its quotes", g


def test_a_time_in_two_parts_without_and_is_one_figure() -> None:
    quote = "The median stay in the ward was 3 hours and 25 minutes."
    assert check_grounding("The median stay in the ward was 3 hours 25 minutes.", [quote]).ok
    assert check_grounding("The median stay in the ward was 205 minutes.", [quote]).ok
    assert not check_grounding("The median stay in the ward was 3 hours 45 minutes.", [quote]).ok



def test_as_little_as_before_a_figure_is_a_bound_not_hardly_any() -> None:
    quote = "The sensor detects temperature changes of as little as 0.01 kelvin."
    assert check_grounding("The sensor detects temperature changes of only 0.01 kelvin.", [quote]).ok
    g = check_grounding("The sensor detects temperature changes of 0.01 kelvin.",
                        ["The sensor detects little change below 0.01 kelvin."])
    assert not g.ok, g


def test_often_restates_a_quotes_frequent() -> None:
    quote = "Wardens observed that the nesting success of the terns was lower on beaches with frequent horse riding."
    assert check_grounding("On beaches where horses were ridden often, wardens found that the terns nested less "
                           "successfully.", [quote]).ok
    g = check_grounding("On beaches where horses were ridden rarely, wardens found that the terns nested less "
                        "successfully.", [quote])
    assert not g.ok and g.category == "quantifier", g


def test_a_plural_after_a_verb_and_its_adjective_is_its_object_not_the_verb() -> None:
    quote = "The county scheme, funded by the Harlan Trust, provides free lunches to pupils in 40 rural schools."
    assert check_grounding("Pupils in 40 rural schools receive free lunches through a county scheme that the "
                           "Harlan Trust funds.", [quote]).ok
    assert check_grounding("Residents of 30 villages receive weekly visits from a mobile clinic that the Harlan "
                           "Trust runs.", ["The mobile clinic, run by the Harlan Trust, makes weekly visits to "
                                           "residents of 30 villages."]).ok


def test_a_places_irregular_adjective_is_its_name() -> None:
    quote = "The cheese is made in a cooperative dairy in southern France."
    assert check_grounding("The cheese is made in a southern French cooperative dairy.", [quote]).ok
    g = check_grounding("The cheese is made in a southern Spanish cooperative dairy.", [quote])
    assert not g.ok and g.category == "name", g


def test_a_place_or_group_after_the_head_of_an_opening_condition_is_not_dropped() -> None:
    quote = "For tenants in the lowest income band, rent absorbed 41% of monthly income in 2023, the study found."
    g = check_grounding("Rent absorbed 41% of tenants' monthly income in 2023, the study found.", [quote])
    assert not g.ok and g.category == "scope", g
    assert check_grounding("Rent absorbed 41% of monthly income in 2023 for tenants in the lowest income band.",
                           [quote]).ok
    g = check_grounding("The wage gap shrank to 7 percent among part-time staff.",
                        ["Among part-time staff in retail, the wage gap shrank to 7 percent."])
    assert not g.ok and g.category == "scope", g


def test_and_before_a_subject_and_its_verb_opens_a_clause_whose_roles_are_read_apart() -> None:
    quote = "In this design, the viewer opens the session and the relay streams frames to it as they arrive."
    g = check_grounding("In this design, the relay opens the session and the viewer streams frames to it as they "
                        "arrive.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("In this design, the viewer opens the session, and the relay then streams frames to it "
                           "as they arrive.", [quote]).ok
    assert [c.text[c.start:c.end] for c in clauses("The cat and the dog ran home.")] == ["The cat and the dog ran home"]


def test_a_duty_where_the_quote_recommends_and_a_certainty_where_it_doubts() -> None:
    g = check_grounding("The code requires riders to wear a helmet on every trail.",
                        ["The code recommends that riders wear a helmet on every trail."])
    assert not g.ok and g.category == "modality", g
    quote = "The captain is doubtful for Sunday's final after a knee injury in training."
    g = check_grounding("The captain will miss Sunday's final after a knee injury.", [quote])
    assert not g.ok and g.category == "modality", g
    assert check_grounding("The captain may miss Sunday's final after a knee injury.", [quote]).ok


def test_the_opposite_outcome_of_a_decision_is_a_negation() -> None:
    g = check_grounding("The tribunal dismissed the union's complaint.",
                        ["The union's complaint was upheld by the tribunal."])
    assert not g.ok and g.category == "negation", g
    g = check_grounding("The board approved the proposed merger.", ["The board rejected the proposed merger."])
    assert not g.ok and g.category == "negation", g
    assert check_grounding("The tribunal upheld the union's complaint.",
                           ["The union's complaint was upheld by the tribunal."]).ok


def test_a_bound_said_to_be_near_its_figure_is_near_it() -> None:
    quote = "The largest file the format can hold is 2 GB."
    g = check_grounding("The largest file the format can hold is just under 2 TB.", [quote])
    assert not g.ok and g.category == "number", g
    assert check_grounding("The survey reached just over 3,000 households.",
                           ["The survey reached 3,142 households."]).ok
    assert check_grounding("The largest file the format can hold is under 2 TB.", [quote]).ok  # a plain bound


def test_a_superlative_in_two_words_is_a_record_the_quote_must_state() -> None:
    g = check_grounding("The festival drew 80,000 visitors, making it one of the most successful festivals.",
                        ["The festival drew 80,000 visitors."])
    assert not g.ok and g.category == "terms", g
    assert check_grounding("The nasal spray produced the most powerful response of the three vaccines.",
                           ["Of the three vaccines, the nasal spray produced the strongest response."]).ok


def test_evidence_that_fits_a_claim_is_a_hedge_and_an_open_question_is_less_than_a_fact() -> None:
    g = check_grounding("The tracer data confirm a leak in the lower aquifer.",
                        ["The tracer data are consistent with a leak in the lower aquifer."])
    assert not g.ok and g.category == "modality", g
    g = check_grounding("It is unclear whether the additive corrodes copper pipes.",
                        ["The additive corrodes copper pipes."])
    assert not g.ok and g.category == "modality", g
    assert check_grounding("The tracer data fit a leak in the lower aquifer, but do not prove it.",
                           ["The tracer data are consistent with a leak in the lower aquifer."]).ok is False
    assert check_grounding("The tracer data are consistent with a leak in the lower aquifer.",
                           ["The tracer data are consistent with a leak in the lower aquifer."]).ok


def test_at_least_restates_or_more_after_the_figure() -> None:
    quote = "The grant is open to firms with 20 or more staff."
    assert check_grounding("The grant is open to firms with at least 20 staff.", [quote]).ok
    g = check_grounding("The grant is open to firms with at least 20 staff.",
                        ["The grant is open to firms with 20 or fewer staff."])
    assert not g.ok and g.category == "comparative", g


def test_a_change_named_by_its_noun_keeps_its_direction() -> None:
    quote = "In rats, the extract reduced plaque growth by about 30%."
    assert check_grounding("Rats given the extract showed roughly 30% less plaque growth.", [quote]).ok
    g = check_grounding("Rats given the extract showed roughly 30% more plaque growth.", [quote])
    assert not g.ok and g.category == "comparative", g


def test_a_verb_of_change_with_only_a_date_after_it_has_no_object() -> None:
    quote = "The new terminal was opened on 14 March 2019."
    assert check_grounding("The new terminal opened on 14 March 2019.", [quote]).ok
    g = check_grounding("The airline opened the new terminal on 14 March 2019.",
                        ["The new terminal opened the airline on 14 March 2019."])
    assert not g.ok and g.category == "role", g


def test_an_age_bound_said_another_way_keeps_the_condition() -> None:
    quote = "Among drivers aged 70 and older, the course cut crash rates by 15%."
    assert check_grounding("For drivers 70 or over, the course cut crash rates by 15%.", [quote]).ok
    g = check_grounding("For drivers, the course cut crash rates by 15%.", [quote])
    assert not g.ok and g.category == "scope", g


def test_an_attribution_to_the_source_adds_nothing_but_a_name_must_be_quoted() -> None:
    quote = "The museum holds about 12,000 works of folk art."
    assert check_grounding("The museum holds about 12,000 works of folk art, according to its catalogue.", [quote]).ok
    g = check_grounding("The museum holds about 12,000 works of folk art, according to UNESCO.", [quote])
    assert not g.ok and g.category == "name", g


def test_two_things_told_apart_by_a_compared_adjective_keep_their_roles() -> None:
    quote = "In the survey, the larger colonies regularly drove the smaller colonies from the nesting cliffs."
    g = check_grounding("In the survey, the smaller colonies regularly drove the larger colonies from the nesting "
                        "cliffs.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("In the survey, the larger colonies regularly drove the smaller ones from the nesting "
                           "cliffs.", [quote]).ok


def test_a_quote_that_names_the_thing_again_lends_its_predicate_to_the_clause_before() -> None:
    quotes = ["The red kite population in the valley had fallen to 12 breeding pairs by 1985.",
              "After a ban on poisoned bait, the population grew to 140 breeding pairs by 2020."]
    assert check_grounding("Red kites in the valley fell to 12 breeding pairs by 1985 but grew to 140 pairs by 2020 "
                           "after poisoned bait was banned.", quotes).ok
    g = check_grounding("Red kites in the valley fell to 12 breeding pairs by 1985 but grew to 140 pairs by 2020 "
                        "after poisoned bait was banned.",
                        [quotes[0], "After a ban on poisoned bait, the buzzards grew to 140 breeding pairs by 2020."])
    assert not g.ok and g.category == "merge", g


def test_the_group_that_did_not_is_a_comparison_base_not_a_denial() -> None:
    quote = "Pupils who attended the reading club scored, on average, 9 points higher on the spelling test than those " \
            "who did not."
    assert check_grounding("On the spelling test, reading-club attendees outscored non-attendees by an average of 9 "
                           "points.", [quote]).ok
    g = check_grounding("Pupils who attended the reading club did not score higher on the spelling test.", [quote])
    assert not g.ok and g.category == "negation", g


def test_a_predicate_said_of_two_things_must_be_in_each_ones_quote() -> None:
    quotes = ["The older bridge was built of granite in 1820.", "The newer bridge was built of steel in 1962."]
    g = check_grounding("The older bridge and the newer bridge were both built of steel.", quotes)
    assert not g.ok and g.category == "merge", g
    g = check_grounding("The newer bridge, like the older bridge, was built of granite.", quotes)
    assert not g.ok and g.category == "merge", g
    assert check_grounding("Kestrels and merlins both hunt over open moorland.",
                           ["Kestrels hunt over open moorland.", "Merlins also hunt over open moorland."]).ok


def test_after_may_not_join_two_quotes_that_give_no_order_or_cause() -> None:
    quotes = ["Coffee prices rose 6% in June.", "A frost in Brazil reduced the sugar harvest by a fifth."]
    g = check_grounding("Coffee prices rose 6% in June after a frost in Brazil reduced the harvest by a fifth.", quotes)
    assert not g.ok and g.category == "merge", g
    assert check_grounding("Coffee prices rose 6% in June, and a frost in Brazil reduced the sugar harvest by a "
                           "fifth.", quotes).ok


def test_despite_may_not_join_two_quotes_that_give_no_link() -> None:
    quotes = ["The Gemini 8 mission docked with its target in March 1966.",
              "Gemini 9 suffered a shroud failure in June 1966 and returned without docking."]
    g = check_grounding("Gemini 8 docked with its target in March 1966 despite a shroud failure.", quotes)
    assert not g.ok and g.category == "merge", g


def test_can_before_a_figure_it_reaches_is_a_capacity_not_a_hedge() -> None:
    assert check_grounding("The tank holds up to 40,000 litres of water.",
                           ["The tank can store up to 40,000 litres of water."]).ok
    g = check_grounding("The additive cuts fuel use by 12%.", ["The additive can cut fuel use by 12%."])
    assert not g.ok and g.category == "modality", g
    g = check_grounding("The filter removes 99% of bacteria.", ["The filter can remove bacteria."])
    assert not g.ok, g


def test_anything_denied_is_everything_left() -> None:
    quote = "The preview mode lists the rows that would change without writing anything to the table."
    assert check_grounding("The preview mode lists the rows that would change but leaves everything in the table "
                           "untouched.", [quote]).ok
    g = check_grounding("The preview mode writes everything to the table.", [quote])
    assert not g.ok, g


def test_a_word_that_holds_a_negation_balances_not() -> None:
    assert check_grounding("Under the rule, landlords may not ask tenants about their credit score.",
                           ["The rule prohibits landlords from asking tenants about their credit score."]).ok
    assert check_grounding("A lack of volunteers forced the club to cancel its summer fair.",
                           ["The club cancelled its summer fair because of a shortage of volunteers."]).ok
    assert check_grounding("Because the linter ignores generated files, they are never reported.",
                           ["The linter does not check generated files, so they are never reported."]).ok
    # the same word on both sides balances nothing: a negation added to it is a flip
    g = check_grounding("The rule does not prohibit landlords from asking about credit scores.",
                        ["The rule prohibits landlords from asking about credit scores."])
    assert not g.ok and g.category == "negation", g
    # a verb that stops or leaves out a thing is no negation of "prevents"
    g = check_grounding("The coating stops rust from forming on the hull.",
                        ["The coating does not prevent rust from forming on the hull."])
    assert not g.ok and g.category == "negation", g


def test_failure_to_act_is_failing_to_act() -> None:
    assert check_grounding("The tribunal found that the council's failure to repair the roof breached its duty.",
                           ["The tribunal ruled that the council breached its duty by failing to repair the roof."]).ok
    g = check_grounding("The tribunal found that the council's failure to repair the roof breached its duty.",
                        ["The tribunal ruled that the council breached its duty by repairing the roof late."])
    assert not g.ok, g


def test_cannot_exceed_a_cap_is_a_bound_only_against_a_cap() -> None:
    assert check_grounding("The service caps the size of any single upload at 2 GB.",
                           ["The maximum upload size is 2 GB. On the service, a single upload cannot exceed this "
                            "limit."]).ok
    g = check_grounding("The total copying work cannot exceed what an eager copy would cost.",
                        ["The total copying work can exceed what an eager copy would cost."])
    assert not g.ok and g.category == "negation", g


def test_a_quote_that_goes_on_about_it_may_give_a_word_to_its_subject() -> None:
    quotes = ["The quartet recorded the record in ten days.", "It was released in June and reached number four."]
    assert check_grounding("Recorded in ten days, the record came out in June and peaked at number four.", quotes).ok
    # a quote that goes on about another setting gives no word to this one
    g = check_grounding("On Linux, the event loop uses kqueue.",
                        ["On Linux, the event loop uses epoll.", "On macOS and the BSD systems, it uses kqueue."])
    assert not g.ok and g.category == "merge", g


def test_raised_before_a_count_rears_or_produces_it() -> None:
    quote = "Hives fed the additive produced significantly fewer drones than untreated hives."
    assert check_grounding("Compared with untreated hives, hives fed the additive raised markedly fewer drones.",
                           [quote]).ok
    g = check_grounding("Hives fed the additive produced significantly more drones than untreated hives.", [quote])
    assert not g.ok and g.category == "comparative", g
    g = check_grounding("The bank raised its rate to 4%.", ["The bank lowered its rate to 4%."])
    assert not g.ok and g.category == "comparative", g


def test_fell_to_a_party_is_taken_not_a_fall() -> None:
    assert check_grounding("The citadel fell to the Ottomans in 1522.", ["The Ottomans captured the citadel in 1522."]).ok
    g = check_grounding("The citadel's garrison fell to 200 men in 1522.", ["The citadel's garrison grew to 200 men in 1522."])
    assert not g.ok and g.category == "comparative", g


def test_two_figures_of_a_list_may_not_trade_places() -> None:
    quote = "About 60 percent of the region's water comes from rivers, and 30 percent from aquifers."
    g = check_grounding("About 30 percent of the region's water comes from rivers, and 60 percent from aquifers.", [quote])
    assert not g.ok and g.category == "number", g
    assert check_grounding("Rivers supply about 60 percent of the region's water and aquifers 30 percent.", [quote]).ok


def test_taking_longer_is_being_slower() -> None:
    quote = "Encrypted backups took longer to restore but used less bandwidth."
    g = check_grounding("Encrypted backups were quicker to restore and used less bandwidth.", [quote])
    assert not g.ok and g.category == "comparative", g
    assert check_grounding("Encrypted backups were slower to restore but used less bandwidth.", [quote]).ok


def test_cause_and_effect_may_not_trade_places() -> None:
    quote = "The river was dredged, and flooding in the town fell as a result."
    g = check_grounding("Flooding in the town fell, and the river was dredged as a result.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("The river was dredged, and as a result flooding in the town fell.", [quote]).ok


def test_an_opening_qualifier_may_start_with_an_irregular_participle_or_an_adverb() -> None:
    quotes = ["The bridge carries four lanes of traffic over the estuary.", "It was last rebuilt in 1994."]
    assert check_grounding("Last rebuilt in 1994, the bridge carries four lanes of traffic over the estuary.", quotes).ok
    quotes = ["The lighthouse guides ships past the reef.", "It was built by Danish engineers in 1871."]
    assert check_grounding("Built by Danish engineers in 1871, the lighthouse guides ships past the reef.", quotes).ok
    g = check_grounding("Built by Danish engineers in 1871, the lighthouse guides ships past the reef.",
                        ["The lighthouse guides ships past the reef.",
                         "The harbour wall was built by Danish engineers in 1871."])
    assert not g.ok and g.category == "merge", g


def test_a_quote_that_goes_on_after_a_time_word_may_give_a_word_to_its_subject() -> None:
    quotes = ["The museum opened in 1923 with 400 paintings.", "Today it owns more than 9,000 works."]
    assert check_grounding("Opened in 1923 with 400 paintings, the museum now owns over 9,000 works.", quotes).ok
    g = check_grounding("Opened in 1923 with 400 paintings, the museum now owns over 9,000 works.",
                        ["The museum opened in 1923 with 400 paintings.",
                         "The city archive next door owns more than 9,000 works."])
    assert not g.ok, g


def test_a_causing_verb_may_not_trade_cause_and_effect() -> None:
    quote = "The report concludes that cheaper credit drove the rise in house prices."
    g = check_grounding("The report concludes that the rise in house prices drove cheaper credit.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("The report concludes that the rise in house prices was driven by cheaper credit.",
                           [quote]).ok
    g = check_grounding("Officials said the station's closure was a result of the falling ridership.",
                        ["Officials said the falling ridership was a result of the station's closure."])
    assert not g.ok and g.category == "role", g
    # the same direction said the other way round stays
    assert check_grounding("Injuries its couriers cause while at work are the employer's liability, the court held.",
                           ["The court held that the employer was liable for injuries caused by its couriers while at "
                            "work."]).ok


def test_a_named_phrase_in_both_does_not_back_a_reversed_comparison() -> None:
    # "the growing season" is a name both say; its "growing" binds nothing to "higher"
    quote = "Average river flow at the gauge was 18% lower than the long-term mean during the 2021 growing season."
    g = check_grounding("River flow at the gauge during the 2021 growing season was 18% higher than the long-term "
                        "average.", [quote])
    assert not g.ok and g.category == "comparative", g
    assert check_grounding("River flow at the gauge during the 2021 growing season was 18% lower than the "
                           "long-term average.", [quote]).ok


def test_warmer_and_cooler_are_above_and_below() -> None:
    quote = "The reservoir's surface temperature in July was 0.9 °C above the 1981-2010 average."
    g = check_grounding("In July the reservoir's surface was 0.9 °C cooler than the 1981-2010 average.", [quote])
    assert not g.ok and g.category == "comparative", g
    assert check_grounding("In July the reservoir's surface was 0.9 °C warmer than the 1981-2010 average.",
                           [quote]).ok
    # (a bound on a figure, "hotter than 1,400 K", is checked with the figure)
    assert check_grounding("Its surface is thought to be hotter than 900 K.",
                           ["The planet is estimated to have a surface temperature above 900 kelvin."]).ok


def test_preyed_on_by_names_its_agent_after_by() -> None:
    quote = "Field mice are preyed on by the barn owl, which hunts mostly at dusk."
    g = check_grounding("Field mice prey on the barn owl, which hunts mostly at dusk.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("The barn owl preys on field mice, hunting mostly at dusk.", [quote]).ok


def test_verbs_of_one_act_may_not_trade_their_sides() -> None:
    bought = "Halvard Foods acquired the dairy start-up Milko for $40 million."
    g = check_grounding("The dairy start-up Milko bought Halvard Foods for $40 million.", [bought])
    assert not g.ok and g.category == "role", g
    assert check_grounding("Halvard Foods purchased the dairy start-up Milko for $40 million.", [bought]).ok
    beat = "In the final, Okafor defeated the top seed, Brandt, in four sets."
    g = check_grounding("In the final, top seed Brandt beat Okafor in four sets.", [beat])
    assert not g.ok and g.category == "role", g
    assert check_grounding("In the final, Okafor beat the top seed Brandt in four sets.", [beat]).ok


def test_two_names_after_by_may_not_trade_places() -> None:
    quote = "The opera was staged by director Lena Holt, with a libretto by Marek Zeman."
    g = check_grounding("The opera was staged by director Marek Zeman, with a libretto by Lena Holt.", [quote])
    assert not g.ok and g.category == "role", g
    g = check_grounding("The opera was staged by Marek Zeman from a libretto by librettist Lena Holt.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("Lena Holt directed the opera, whose libretto was by Marek Zeman.", [quote]).ok


def test_an_intention_is_not_what_will_be() -> None:
    quote = "The council hopes to open the new library branch in 2027, subject to funding."
    g = check_grounding("The council will open the new library branch in 2027.", [quote])
    assert not g.ok and g.category == "modality", g
    assert check_grounding("The council aims to open the new library branch in 2027.", [quote]).ok
    # (a goal named as a noun restates an aim)
    assert check_grounding("Opening the new library branch in 2027 is the council's goal.",
                           ["The council aims to open the new library branch in 2027."]).ok


def test_a_compound_both_have_does_not_keep_a_dropped_condition() -> None:
    quote = "In aged rats, the drug reversed age-related hearing loss within six weeks of daily dosing."
    g = check_grounding("The drug reversed age-related hearing loss within six weeks.", [quote])
    assert not g.ok and g.category == "scope", g
    assert check_grounding("In aged rats, the drug reversed age-related hearing loss within six weeks.", [quote]).ok


def test_a_for_phrase_that_narrows_the_subject_is_not_dropped() -> None:
    quote = "The upload limit for guest accounts is 20 files per day; members may upload up to 500."
    g = check_grounding("The upload limit is 20 files per day.", [quote])
    assert not g.ok and g.category == "scope", g
    assert check_grounding("Guest accounts may upload at most 20 files per day.", [quote]).ok
    # (a time is no narrowing: "for the same period")
    assert check_grounding("Its net profit fell to 310 million dollars.",
                           ["Net profit for the same period fell to 310 million dollars."]).ok


def test_a_hyphenated_fraction_is_a_figure_a_bound_may_hold() -> None:
    quote = "The membrane retained over 80% of its initial flux after 300 hours of operation."
    assert check_grounding("After 300 hours of operation, the membrane kept more than four-fifths of its initial "
                           "flux.", [quote]).ok


def test_a_tally_in_words_is_two_counts() -> None:
    quote = "The board approved the merger by a vote of eight to three on Monday."
    assert check_grounding("On Monday the board backed the merger by eight votes to three.", [quote]).ok
    assert check_grounding("The board approved the merger 8-3 on Monday.", [quote]).ok
    g = check_grounding("On Monday the board backed the merger by nine votes to three.", [quote])
    assert not g.ok and g.category == "number", g


def test_one_scale_word_scales_both_ends_of_a_change() -> None:
    quote = "The port's annual throughput rose from 31 million tonnes to 36 million tonnes after the expansion."
    assert check_grounding("After the expansion, the port's annual throughput rose from 31 to 36 million tonnes.",
                           [quote]).ok
    g = check_grounding("After the expansion, the port's annual throughput rose from 31 to 38 million tonnes.",
                        [quote])
    assert not g.ok and g.category == "number", g


def test_a_time_of_day_is_one_figure_in_either_clock() -> None:
    quote = "The museum's late opening runs from 17:30 to 21:00 on Fridays."
    assert check_grounding("On Fridays the museum stays open late, from 5.30 pm to 9.00 pm.", [quote]).ok
    g = check_grounding("On Fridays the museum stays open late, from 5.30 pm to 10.00 pm.", [quote])
    assert not g.ok and g.category == "number", g


def test_a_plus_after_a_comma_opens_what_another_quote_adds() -> None:
    quotes = ["A 100-gram serving of cooked chickpeas provides about 9 grams of protein.",
              "Chickpeas are also a good source of folate and manganese."]
    assert check_grounding("Per 100 g, cooked chickpeas supply about 9 g of protein, plus folate and manganese.",
                           quotes).ok


def test_keeping_a_thing_at_bay_is_preventing_it() -> None:
    quote = "Regular pruning is recommended to prevent fungal infections in the orchard."
    assert check_grounding("Regular pruning is recommended to keep fungal infections at bay in the orchard.",
                           [quote]).ok


def test_what_prompted_an_act_is_its_cause() -> None:
    quote = "Falling enrolment prompted the school board to close two primary schools in 2023."
    g = check_grounding("The closure of two primary schools in 2023 drove enrolment down.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("Falling enrolment led the school board to close two primary schools in 2023.", [quote]).ok


def test_a_figure_or_more_after_its_unit_is_a_lower_bound() -> None:
    quote = "Curing the hams for at least nine months develops their characteristic flavour."
    assert check_grounding("Curing the hams for nine months or longer develops their characteristic flavour.",
                           [quote]).ok
    g = check_grounding("Curing the hams for nine months or shorter develops their characteristic flavour.", [quote])
    assert not g.ok and g.category == "comparative", g


def test_an_error_raised_is_no_rise() -> None:
    quote = "The parser logs a warning, rather than an exception, when it meets an unknown field."
    assert check_grounding("On meeting an unknown field, the parser logs a warning instead of raising an exception.",
                           [quote]).ok
    g = check_grounding("The parser raised its tolerance for unknown fields.",
                        ["The parser lowered its tolerance for unknown fields."])
    assert not g.ok and g.category == "comparative", g


def test_a_permission_given_restates_may_but_not_a_hedged_one() -> None:
    quote = "Under the policy, an employee may take up to ten days of paid leave to care for a relative."
    assert check_grounding("The policy lets an employee take up to ten days of paid leave to care for a relative.",
                           [quote]).ok
    assert check_grounding("The policy allows an employee to take up to ten days of paid leave to care for a "
                           "relative.", [quote]).ok
    hedged = "The new runway might allow the airport to handle 60 flights an hour."
    g = check_grounding("The new runway will allow the airport to handle 60 flights an hour.", [hedged])
    assert not g.ok and g.category == "modality", g
    g = check_grounding("An employee takes up to ten days of paid leave to care for a relative.", [quote])
    assert not g.ok and g.category == "modality", g


def test_an_outcome_or_stance_turned_is_a_negation() -> None:
    quote = "The planning board approved the proposed wind farm off the northern cape in June."
    g = check_grounding("The planning board blocked the proposed wind farm off the northern cape in June.", [quote])
    assert not g.ok and g.category == "negation", g
    rule = "The new bylaw permits food trucks to park on the promenade after 6 pm."
    g = check_grounding("The new bylaw prohibits food trucks from parking on the promenade after 6 pm.", [rule])
    assert not g.ok and g.category == "negation", g
    vote = "Councillor Mbeki voted against the library closures at Tuesday's meeting."
    g = check_grounding("At Tuesday's meeting, Councillor Mbeki voted in favour of the library closures.", [vote])
    assert not g.ok and g.category == "negation", g
    assert check_grounding("The planning board gave its approval to the proposed wind farm off the northern cape "
                           "in June.", [quote]).ok


def test_an_act_only_intended_is_not_done() -> None:
    quote = "The museum plans to reopen its east wing to visitors in the spring."
    g = check_grounding("The museum has reopened its east wing to visitors.", [quote])
    assert not g.ok and g.category == "modality", g
    talks = "The airline is in talks to buy twelve regional jets from the manufacturer."
    g = check_grounding("The airline bought twelve regional jets from the manufacturer.", [talks])
    assert not g.ok and g.category == "modality", g
    assert check_grounding("The museum intends to reopen its east wing to visitors in the spring.", [quote]).ok


def test_a_passive_agent_after_its_adjuncts_is_the_doer() -> None:
    quote = "The top seed Arjun Rao was beaten in three sets in the quarter-final on Thursday by the wildcard Tomas Berg."
    g = check_grounding("The top seed Arjun Rao beat the wildcard Tomas Berg in three sets in the quarter-final on "
                        "Thursday.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("The wildcard Tomas Berg beat the top seed Arjun Rao in three sets in the quarter-final "
                           "on Thursday.", [quote]).ok


def test_whom_an_offer_is_for_is_a_condition() -> None:
    quote = "Parking at the harbour car park is free for registered residents on weekday evenings."
    g = check_grounding("Parking at the harbour car park is free on weekday evenings.", [quote])
    assert not g.ok and g.category == "scope", g
    assert check_grounding("Registered residents can park at the harbour car park for free on weekday evenings.",
                           [quote]).ok


def test_a_condition_word_the_quote_says_again_elsewhere_keeps_nothing() -> None:
    quote = "On icy roads, the new compound stops the car in a shorter distance, according to road safety trials."
    g = check_grounding("The new compound stops the car in a shorter distance, according to road safety trials.",
                        [quote])
    assert not g.ok and g.category == "scope", g


def test_a_possessive_name_that_opens_a_quote_is_its_subject() -> None:
    quotes = ["Veltian exports of cut roses reached 2.3 billion dollars last year.",
              "Morland's tea exports rose by 14 percent."]
    g = check_grounding("Veltian exports of cut roses rose by 14 percent last year, reaching 2.3 billion dollars.",
                        quotes)
    assert not g.ok and g.category == "merge", g
    austrian = ["Austria's labour force participation rate for women aged 20 to 64 reached 72.1% in 2022.",
                "For men in the same age group, participation was 81.4% in 2022."]
    assert check_grounding("In 2022, 72.1% of Austrian women aged 20 to 64 participated in the labour force, "
                           "compared with 81.4% of men in the same age group.", austrian).ok


def test_a_participle_after_while_is_said_of_the_clause_subject() -> None:
    quotes = ["The Northwind Bond Fund gained 6 percent in 2023.",
              "The Redcliff Equity Fund charges a yearly fee of 0.4 percent."]
    g = check_grounding("The Northwind Bond Fund gained 6 percent in 2023 while charging a yearly fee of 0.4 percent.",
                        quotes)
    assert not g.ok and g.category == "merge", g
    same = [quotes[0], "The fund charges a yearly fee of 0.4 percent."]
    assert check_grounding("The Northwind Bond Fund gained 6 percent in 2023 while charging a yearly fee of 0.4 "
                           "percent.", same).ok


def test_a_letter_that_labels_a_group_is_part_of_its_name() -> None:
    quote = "Participants in Cohort B reported the best sleep quality after twelve weeks."
    g = check_grounding("Participants in Cohort C reported the best sleep quality after twelve weeks.", [quote])
    assert not g.ok and g.category == "name", g
    quotes = ["Residents in Block C received home visits twice a month.",
              "Residents in Block D showed the greatest improvement in balance at three months."]
    g = check_grounding("Residents in Block C, who received home visits twice a month, showed the greatest "
                        "improvement in balance at three months.", quotes)
    assert not g.ok and g.category == "merge", g
    assert check_grounding("After twelve weeks, participants in Cohort B reported the best sleep quality.", [quote]).ok


def test_a_relative_clause_of_new_words_adds_a_claim() -> None:
    quote = "The field station logs soil temperature every ten minutes to a local data store."
    g = check_grounding("The field station logs soil temperature every ten minutes to a local data store, which is "
                        "password protected.", [quote])
    assert not g.ok and g.category == "terms", g
    assert check_grounding("Every ten minutes the field station logs soil temperature to a data store, which is local.",
                           [quote]).ok


def test_a_quote_that_names_the_thing_again_by_its_kind_speaks_of_it() -> None:
    quotes = ["Marrowleaf is a perennial shrub native to upland heaths in Wales.", "The plant flowers in May and June."]
    assert check_grounding("A perennial shrub native to the upland heaths of Wales, marrowleaf produces its flowers "
                           "in May and June.", quotes).ok
    other = ["Marrowleaf is a perennial shrub native to upland heaths in Wales.",
             "The committee meets in May and June."]
    g = check_grounding("Marrowleaf, a perennial shrub native to upland heaths in Wales, meets in May and June.", other)
    assert not g.ok, g


def test_a_cause_no_quote_gives_is_an_added_claim() -> None:
    quote = "The ferry service cancelled 14 crossings in February."
    g = check_grounding("The ferry service cancelled 14 crossings in February because of crew shortages.", [quote])
    assert not g.ok and g.category == "terms", g
    g = check_grounding("The ferry service cancelled 14 crossings in February, driven by rising fuel costs.", [quote])
    assert not g.ok and g.category == "terms", g
    # the quote's own reason, reworded round another link, is kept
    assert check_grounding("Because the glaze contains cobalt, it fires to a deep blue.",
                           ["The glaze contains cobalt, which makes it fire to a deep blue."]).ok


def test_a_period_bounded_at_both_ends_is_not_run_on_to_now() -> None:
    quote = "Between 2012 and 2016, the lake's otter count tripled."
    g = check_grounding("The lake's otter count has tripled since 2012.", [quote])
    assert not g.ok and g.category == "scope", g
    assert check_grounding("From 2012 to 2016 the otter count of the lake tripled.", [quote]).ok


def test_a_part_of_a_place_is_not_spread_across_the_whole() -> None:
    quote = "The parking ban applies to streets in the northern districts."
    g = check_grounding("The parking ban applies to streets across the town.", [quote])
    assert not g.ok and g.category == "scope", g
    assert check_grounding("In the northern districts, the parking ban applies to streets.", [quote]).ok


def test_a_place_named_by_its_adjective_names_the_place() -> None:
    quote = "Peruvian climber Rosa Quispe reached the summit on 4 June."
    assert check_grounding("Peru's Rosa Quispe reached the summit on 4 June.", [quote]).ok
    g = check_grounding("Bolivia's Rosa Quispe reached the summit on 4 June.", [quote])
    assert not g.ok, g


def test_a_verb_with_a_particle_restates_the_quotes_one_word() -> None:
    quote = "The ice shelf retreated nearly 3 kilometres between 1990 and 2010."
    assert check_grounding("Between 1990 and 2010 the ice shelf pulled back by nearly 3 kilometres.", [quote]).ok
    assert check_grounding("The method gives back an empty list when nothing matches.",
                           ["The method returns an empty list if no item matches."]).ok
    # the opposite act is still refused
    g = check_grounding("Between 1990 and 2010 the ice shelf advanced by nearly 3 kilometres.", [quote])
    assert not g.ok, g


def test_by_and_a_figure_after_a_verb_is_a_measure_not_its_agent() -> None:
    quote = "The coastline has retreated about 40 metres since 1980."
    assert check_grounding("Since 1980, the coastline has retreated by around 40 metres.", [quote]).ok


def test_a_time_of_a_thing_keeps_the_quotes_condition() -> None:
    quote = "The plant stores surplus wind power during the night and sells it in the morning peak."
    assert check_grounding("The plant stores surplus nighttime wind power and sells it in the morning peak.",
                           [quote]).ok


def test_each_frequency_word_is_read_not_only_the_strongest() -> None:
    quote = "The club has occasionally fielded two strikers, usually at home."
    g = check_grounding("The club has regularly fielded two strikers, usually at home.", [quote])
    assert not g.ok and g.category == "quantifier", g
    assert check_grounding("The club has sometimes fielded two strikers, usually at home.", [quote]).ok


def test_ahead_and_behind_are_each_others_opposite() -> None:
    quote = "The cyclist crossed the line four seconds behind the champion."
    g = check_grounding("The cyclist crossed the line four seconds ahead of the champion.", [quote])
    assert not g.ok, g
    # "ahead of" a date is before it, not a lead
    assert check_grounding("Tenants must be told at least 30 days ahead of any rent rise.",
                           ["Tenants must be told at least 30 days before any rent rise."]).ok


def test_opened_again_restates_reopened_and_no_x_restates_in_x() -> None:
    quote = "The swimming pool, closed since the storm in March, reopened to swimmers on 1 July."
    assert check_grounding("On 1 July the swimming pool opened to swimmers again, having been shut since the "
                           "March storm.", [quote]).ok
    quote = "The two samples were chemically indistinguishable, the laboratory said."
    assert check_grounding("The laboratory said the two samples showed no chemically distinguishable difference.",
                           [quote]).ok
    g = check_grounding("The laboratory said the two samples were chemically distinguishable.", [quote])
    assert not g.ok and g.category == "negation", g


def test_an_irregular_participle_after_be_is_a_passive() -> None:
    quote = "The publisher withdrew the novel after its launch in 1931."
    assert check_grounding("The novel was withdrawn by the publisher after its 1931 launch.", [quote]).ok
    g = check_grounding("The publisher was withdrawn by the novel after its 1931 launch.", [quote])
    assert not g.ok and g.category == "role", g


def test_two_counts_that_trade_their_things_are_refused() -> None:
    quote = "The goalkeeper kept 12 clean sheets in 30 matches last season."
    g = check_grounding("The goalkeeper kept 30 clean sheets in 12 matches last season.", [quote])
    assert not g.ok and g.category == "number", g
    assert check_grounding("Last season the goalkeeper kept 12 clean sheets in 30 matches.", [quote]).ok
    # a count said with another word for its thing is no trade
    assert check_grounding("Only 12 copies survive of the first edition, which numbered about 30.",
                           ["The first edition was printed in 30 copies, of which 12 survive."]).ok


def test_a_subject_taken_from_another_clause_of_the_quote_is_a_swap() -> None:
    quote = "In the hive, the worker caste gathers nectar and pollen, while the queen lays eggs through the season."
    g = check_grounding("In the hive, the queen gathers nectar and pollen, while the worker caste lays eggs through "
                        "the season.", [quote])
    assert not g.ok and g.category == "role", g
    g = check_grounding("In the hive, the queen gathers nectar and pollen.", [quote])
    assert not g.ok and g.category == "role", g
    assert check_grounding("In the hive, the queen lays eggs through the season, and the worker caste gathers "
                           "nectar and pollen.", [quote]).ok


def test_a_passive_with_no_agent_names_no_party_after_its_verb() -> None:
    quote = "The oak restoration trust planted 12,000 saplings along the southern bank of the river."
    assert check_grounding("Under the restoration trust, 12,000 oak saplings were planted along the southern bank "
                           "of the river.", [quote]).ok
    assert check_grounding("A total of 12,000 oak saplings were planted along the river's southern bank by the "
                           "restoration trust.", [quote]).ok
    g = check_grounding("The saplings planted 12,000 oak restoration trusts along the southern bank of the river.",
                        [quote])
    assert not g.ok, g


def test_and_before_do_opens_a_predicate_of_its_own() -> None:
    quote = "The glue sets only above 10 °C and does not bond to wet surfaces."
    assert check_grounding("The glue sets only above 10 °C.", [quote]).ok
    g = check_grounding("The glue bonds to wet surfaces.", [quote])
    assert not g.ok and g.category == "negation", g


def test_a_causal_verb_between_two_clauses_of_one_quote_is_an_added_link() -> None:
    quote = "The bridge opened in 1932, and the ferry service closed two years later."
    g = check_grounding("The opening of the bridge in 1932 led to the closure of the ferry service two years later.",
                        [quote])
    assert not g.ok, g
    assert check_grounding("The ferry service closed two years after the bridge opened in 1932.", [quote]).ok


def test_compulsory_is_the_opposite_of_voluntary_and_suspended_of_continuing() -> None:
    quote = "Membership of the pension scheme is voluntary for part-time staff."
    g = check_grounding("Membership of the pension scheme is compulsory for part-time staff.", [quote])
    assert not g.ok and g.category == "negation", g
    assert check_grounding("For part-time staff, membership of the pension scheme is optional.", [quote]).ok
    quote = "The museum said the night bus will continue to run during the festival."
    g = check_grounding("The museum said the night bus will be suspended during the festival.", [quote])
    assert not g.ok and g.category == "negation", g


def test_stopped_doing_restates_closed_to_it() -> None:
    quote = "Two of the clinics were closed to new patients over the summer."
    assert check_grounding("Over the summer, two of the clinics stopped accepting new patients.", [quote]).ok


def test_a_condition_ends_where_another_event_is_linked() -> None:
    quote = "The organisers said on Friday that the 2027 rally will begin in Oslo, with two stages in Norway before the " \
            "convoy crosses to Sweden."
    assert check_grounding("The rally will begin in Oslo with two Norwegian stages before heading to Sweden.",
                           [quote]).ok
    g = check_grounding("The rally will begin in Oslo with two stages before heading to Sweden.", [quote])
    assert not g.ok and g.category == "scope", g
